package dev.mooring.testkit.server.auth.oidc

import dev.mooring.testkit.server.CommandHandler
import dev.mooring.testkit.server.Reply
import dev.mooring.testkit.server.RequestContext
import dev.mooring.testkit.server.WireServer
import org.bson.BsonArray
import org.bson.BsonBinary
import org.bson.BsonBinaryReader
import org.bson.BsonBinaryWriter
import org.bson.BsonBoolean
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString
import org.bson.codecs.BsonDocumentCodec
import org.bson.codecs.DecoderContext
import org.bson.codecs.EncoderContext
import org.bson.io.BasicOutputBuffer
import java.nio.ByteBuffer
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicInteger

/**
 * Server-side MONGODB-OIDC for a [WireServer], as mongod does it: one-step `saslStart` with a
 * `{jwt}` payload, two-step `saslStart {n}` → IdpInfo → `saslContinue {jwt}`, and
 * `speculativeAuthenticate` in the hello. Tokens are checked against [idp]; a bad or expired
 * token gets AuthenticationFailed (18). Commands other than hello/ping/SASL need an authenticated
 * connection (Unauthorized, 13) whose token is still valid: once it expires they get
 * ReauthenticationRequired (391). Fail points of the server apply before all of this.
 *
 * Thread-safe; per-connection state is keyed by the server's connection number.
 */
class OidcServer(val idp: OidcIdentityProvider) {
    private val tokens = ConcurrentHashMap<Int, String>()
    private val conversations = ConcurrentHashMap<Int, Int>()
    private val conversationIds = AtomicInteger()
    private val saslStarts = AtomicInteger()
    private val speculative = AtomicInteger()
    private val principalSteps = AtomicInteger()
    private val usersSeen = ConcurrentHashMap.newKeySet<String>()

    /** When set, the two-step principal request must name one of these users (a server with several IdPs). */
    @Volatile var knownPrincipals: Set<String>? = null

    /** `saslStart` commands received (speculative ones not counted). */
    val saslStartCount: Int get() = saslStarts.get()

    /** Handshakes whose speculative authentication succeeded. */
    val speculativeSuccesses: Int get() = speculative.get()

    /** Two-step conversations started (PrincipalStepRequest). */
    val principalStepCount: Int get() = principalSteps.get()

    /** Users that authenticated at least once. */
    val authenticatedUsers: Set<String> get() = usersSeen.toSet()

    /** Installs this server in front of [server]'s handler and hello. */
    fun install(server: WireServer) {
        val previousHandler = server.handler
        val previousHello = server.hello
        server.hello = { ctx, cmd -> decorateHello(ctx, cmd, previousHello(ctx, cmd)) }
        server.handler = handler(previousHandler)
    }

    private fun handler(next: CommandHandler): CommandHandler = { ctx, db, cmd ->
        when (ctx.commandName) {
            "saslStart" -> Reply.Document(saslStart(ctx.connectionNumber, db, cmd).also { saslStarts.incrementAndGet() })
            "saslContinue" -> Reply.Document(saslContinue(ctx.connectionNumber, cmd))
            "hello", "isMaster", "ismaster", "ping", "buildInfo", "buildinfo", "endSessions" -> next(ctx, db, cmd)
            else -> {
                val token = tokens[ctx.connectionNumber]
                when {
                    token == null -> Reply.Document(WireServer.error(13, "Unauthorized", "command ${ctx.commandName} requires authentication"))
                    idp.validate(token) == null -> Reply.Document(WireServer.error(391, "ReauthenticationRequired", "the access token expired"))
                    else -> next(ctx, db, cmd)
                }
            }
        }
    }

    private fun decorateHello(ctx: RequestContext, cmd: BsonDocument, reply: BsonDocument): BsonDocument {
        val spec = cmd["speculativeAuthenticate"] as? BsonDocument ?: return reply
        if (!spec.containsKey("saslStart")) return reply
        val r = saslStart(ctx.connectionNumber, "\$external", spec)
        if (r["ok"]?.asNumber()?.intValue() != 1 || r["done"] != BsonBoolean.TRUE) return reply
        speculative.incrementAndGet()
        r.remove("ok")
        return reply.clone().append("speculativeAuthenticate", r)
    }

    private fun saslStart(connection: Int, db: String, cmd: BsonDocument): BsonDocument {
        if (cmd["mechanism"]?.takeIf { it.isString }?.asString()?.value != "MONGODB-OIDC") {
            return WireServer.error(2, "BadValue", "mechanism is not MONGODB-OIDC")
        }
        if (db != "\$external") return WireServer.error(2, "BadValue", "MONGODB-OIDC must authenticate against \$external")
        val payload = payload(cmd) ?: return WireServer.error(17, "ProtocolError", "saslStart needs a BSON payload")
        val jwt = payload["jwt"]
        if (jwt != null) return finish(connection, jwt.takeIf { it.isString }?.asString()?.value)
        principalSteps.incrementAndGet()
        val principal = payload["n"]?.takeIf { it.isString }?.asString()?.value
        val known = knownPrincipals
        if (known != null && (principal == null || principal !in known)) return authFailed()
        val id = conversationIds.incrementAndGet()
        conversations[connection] = id
        val info = BsonDocument("issuer", BsonString(idp.issuer))
        idp.clientId?.let { info["clientId"] = BsonString(it) }
        info["requestScopes"] = BsonArray(idp.requestScopes.map { BsonString(it) })
        return BsonDocument("conversationId", BsonInt32(id)).append("done", BsonBoolean.FALSE)
            .append("payload", BsonBinary(encode(info))).append("ok", BsonInt32(1))
    }

    private fun saslContinue(connection: Int, cmd: BsonDocument): BsonDocument {
        val id = cmd["conversationId"]?.takeIf { it.isNumber }?.asNumber()?.intValue()
        if (id == null || conversations.remove(connection) != id) return WireServer.error(17, "ProtocolError", "No SASL session state found")
        val payload = payload(cmd) ?: return WireServer.error(17, "ProtocolError", "saslContinue needs a BSON payload")
        return finish(connection, payload["jwt"]?.takeIf { it.isString }?.asString()?.value)
    }

    private fun finish(connection: Int, jwt: String?): BsonDocument {
        val user = jwt?.let { idp.validate(it) } ?: return authFailed()
        tokens[connection] = jwt
        usersSeen += user
        return BsonDocument("conversationId", BsonInt32(conversationIds.incrementAndGet())).append("done", BsonBoolean.TRUE)
            .append("payload", BsonBinary(ByteArray(0))).append("ok", BsonInt32(1))
    }

    private fun authFailed() = WireServer.error(18, "AuthenticationFailed", "Authentication failed.")

    private fun payload(cmd: BsonDocument): BsonDocument? {
        val p = cmd["payload"]?.takeIf { it.isBinary }?.asBinary()?.data ?: return null
        return try {
            BsonDocumentCodec().decode(BsonBinaryReader(ByteBuffer.wrap(p)), DecoderContext.builder().build())
        } catch (_: Exception) {
            null
        }
    }

    private fun encode(doc: BsonDocument): ByteArray {
        val out = BasicOutputBuffer()
        BsonDocumentCodec().encode(BsonBinaryWriter(out), doc, EncoderContext.builder().build())
        return out.toByteArray()
    }
}
