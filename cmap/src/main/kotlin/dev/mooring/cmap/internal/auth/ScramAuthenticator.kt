package dev.mooring.cmap.internal.auth

import dev.mooring.cmap.Connection
import dev.mooring.cmap.ConnectionDescription
import dev.mooring.cmap.MongoAuthenticationException
import dev.mooring.cmap.MongoCommandException
import dev.mooring.cmap.MongoCredential
import org.bson.BsonBoolean
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString

/**
 * SCRAM-SHA-1 / SCRAM-SHA-256 authentication (auth.md) for one credential, with speculative
 * authentication in the handshake (handshake.md). Thread-safe: one instance serves every
 * connection of a factory; the per-connection state lives in [ScramConversation].
 * Failures surface as [MongoAuthenticationException]; network errors pass through unchanged.
 */
internal class ScramAuthenticator(private val credential: MongoCredential) : MechanismAuthenticator {
    private val username: String = requireNotNull(credential.username) { "SCRAM needs a username" }
    private val explicit: ScramKind? = credential.mechanism?.let {
        requireNotNull(ScramKind.byName(it)) { "mechanism $it is not SCRAM-SHA-1 or SCRAM-SHA-256" }
    }

    init {
        require(credential.hasPassword) { "SCRAM needs a password" }
    }

    override val mechanismName: String get() = explicit?.mechanismName ?: "SCRAM (negotiated)"

    override fun begin(): AuthSession = object : AuthSession {
        private var speculative: ScramConversation? = null

        override fun speculativeCommand(): BsonDocument? = speculativeStart()?.let { (c, doc) ->
            speculative = c
            doc
        }

        override suspend fun authenticate(connection: Connection, description: ConnectionDescription) {
            authenticate(connection, description, speculative)
        }
    }

    /**
     * Starts the conversation for `speculativeAuthenticate`: the user's mechanism, or
     * SCRAM-SHA-256 when it is negotiated (handshake.md). Returns the conversation and the
     * document for the handshake command, or null when the credential cannot start one.
     */
    fun speculativeStart(): Pair<ScramConversation, BsonDocument>? {
        val conversation = try {
            newConversation(explicit ?: ScramKind.SHA_256)
        } catch (e: IllegalArgumentException) {
            // e.g. a password SASLprep prohibits: the standard conversation reports it as an auth error
            return null
        }
        val doc = saslStart(conversation).append("db", BsonString(credential.source))
        return conversation to doc
    }

    /**
     * Authenticates [connection]. When [speculative] is given and the handshake reply holds a
     * `speculativeAuthenticate` document, that conversation continues (saving the saslStart
     * round trip); otherwise a standard conversation runs with the negotiated mechanism.
     */
    suspend fun authenticate(connection: Connection, description: ConnectionDescription, speculative: ScramConversation?) {
        var kind = explicit ?: ScramKind.negotiate(supportedMechs(description.helloReply))
        try {
            val specReply = description.helloReply["speculativeAuthenticate"] as? BsonDocument
            val (conversation, firstReply) = if (speculative != null && specReply != null) {
                kind = speculative.kind
                speculative to specReply
            } else {
                speculative?.discard()
                val c = newConversation(kind)
                c to connection.command(credential.source, saslStart(c).append("autoAuthorize", BsonInt32(1)))
            }
            converse(connection, conversation, firstReply)
        } catch (e: MongoCommandException) {
            throw MongoAuthenticationException(
                "Authentication failed for user '$username' on database '${credential.source}' with ${kind.mechanismName}: " +
                    "server error ${e.code}${e.codeName?.let { " ($it)" } ?: ""}: ${e.errmsg ?: "no message"}",
                connection.address, connection.generation, e.code, e,
            )
        } catch (e: ScramFailure) {
            throw failed(connection, kind, e.message, e)
        } catch (e: AuthFailure) {
            throw failed(connection, kind, e.message, e)
        } catch (e: IllegalArgumentException) {
            throw failed(connection, kind, e.message, null)
        }
    }

    private fun failed(connection: Connection, kind: ScramKind, message: String?, cause: Throwable?) = MongoAuthenticationException(
        "Authentication failed for user '$username' on database '${credential.source}' with ${kind.mechanismName}: $message",
        connection.address, connection.generation, null, cause,
    )

    private suspend fun converse(connection: Connection, conversation: ScramConversation, firstReply: BsonDocument) {
        if (SaslCommands.isDone(firstReply)) throw ScramFailure("the server ended the conversation before proving that it knows the password")
        val conversationId = SaslCommands.conversationId(firstReply)
        val clientFinal = conversation.clientFinal(SaslCommands.payloadOf(firstReply))
        var reply = connection.command(credential.source, SaslCommands.saslContinue(conversationId, clientFinal))
        conversation.verifyServerFinal(SaslCommands.payloadOf(reply))
        // servers that ignore skipEmptyExchange want one more, empty, exchange
        var extra = 0
        while (!SaslCommands.isDone(reply)) {
            if (++extra > 2) throw ScramFailure("the server did not finish the conversation")
            reply = connection.command(credential.source, SaslCommands.saslContinue(conversationId, ByteArray(0)))
        }
    }

    private fun newConversation(kind: ScramKind): ScramConversation {
        val password = credential.password ?: throw IllegalArgumentException("SCRAM needs a password")
        try {
            return ScramConversation(kind, username, password)
        } finally {
            password.fill('\u0000')
        }
    }

    private fun saslStart(c: ScramConversation): BsonDocument =
        SaslCommands.saslStart(c.kind.mechanismName, c.clientFirst)
            .append("options", BsonDocument("skipEmptyExchange", BsonBoolean.TRUE))

    private fun supportedMechs(hello: BsonDocument): List<String>? =
        (hello["saslSupportedMechs"] as? org.bson.BsonArray)?.filter { it.isString }?.map { it.asString().value }

    override fun toString(): String = "ScramAuthenticator(credential=$credential)"
}
