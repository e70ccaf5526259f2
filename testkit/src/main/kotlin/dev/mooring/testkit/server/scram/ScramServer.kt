package dev.mooring.testkit.server.scram

import com.ongres.scram.common.ScramFunctions
import com.ongres.scram.common.ScramMechanism
import dev.mooring.testkit.server.CommandHandler
import dev.mooring.testkit.server.Reply
import dev.mooring.testkit.server.RequestContext
import dev.mooring.testkit.server.WireServer
import org.bson.BsonArray
import org.bson.BsonBinary
import org.bson.BsonBoolean
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString
import java.security.MessageDigest
import java.security.SecureRandom
import java.util.Base64
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicInteger

/**
 * Server-side SCRAM-SHA-1 / SCRAM-SHA-256 for a [WireServer], as mongod does it: `saslStart` /
 * `saslContinue` checked against stored keys, `saslSupportedMechs` and `speculativeAuthenticate`
 * in the hello, `skipEmptyExchange`, and (optionally) `Unauthorized` for commands on
 * connections that did not authenticate. [forgeServerSignature] makes it send a wrong server
 * signature (a server that does not know the password), for the negative test.
 *
 * Thread-safe: users and switches may change at any time; conversations are per connection.
 */
class ScramServer {
    private val users = ConcurrentHashMap<String, ScramUser>()
    private val conversations = ConcurrentHashMap<Pair<Int, Int>, Conversation>()
    private val authenticated = ConcurrentHashMap.newKeySet<Int>()
    private val conversationIds = AtomicInteger()
    private val random = SecureRandom()
    private val speculative = AtomicInteger()
    private val successes = AtomicInteger()
    private val failures = AtomicInteger()

    /** Send a server signature that does not match (the client must reject it). */
    @Volatile var forgeServerSignature: Boolean = false

    /** Answer commands other than hello, the SASL commands and ping on unauthenticated connections with Unauthorized (13). */
    @Volatile var requireAuthentication: Boolean = true

    /** Handshakes whose `speculativeAuthenticate` was accepted. */
    val speculativeConversations: Int get() = speculative.get()

    /** Conversations that ended with the client authenticated. */
    val successfulAuthentications: Int get() = successes.get()

    /** Conversations the server refused (unknown user, wrong proof). */
    val failedAuthentications: Int get() = failures.get()

    /** Adds or replaces [username] in [database] with [password] for [mechanisms]. */
    fun addUser(
        database: String,
        username: String,
        password: String,
        mechanisms: List<String> = listOf("SCRAM-SHA-1", "SCRAM-SHA-256"),
        iterations: Int = 4096,
    ) {
        val keys = mechanisms.associateWith { StoredScramKeys.derive(it, username, password, iterations) }
        users["$database.$username"] = ScramUser(database, username, keys)
    }

    /** Removes a user. */
    fun removeUser(database: String, username: String) {
        users.remove("$database.$username")
    }

    /** Installs this SCRAM server on [server], in front of its current handler and hello. */
    fun install(server: WireServer) {
        val previousHandler = server.handler
        val previousHello = server.hello
        server.hello = { ctx, cmd -> decorateHello(ctx, cmd, previousHello(ctx, cmd)) }
        server.handler = handler(previousHandler)
    }

    /** A handler answering the SASL commands and enforcing authentication, then delegating to [next]. */
    fun handler(next: CommandHandler): CommandHandler = { ctx, db, cmd ->
        when (ctx.commandName) {
            "saslStart" -> Reply.Document(saslStart(ctx.connectionNumber, db, cmd))
            "saslContinue" -> Reply.Document(saslContinue(ctx.connectionNumber, cmd))
            "hello", "isMaster", "ismaster", "ping", "buildInfo", "buildinfo", "endSessions" -> next(ctx, db, cmd)
            else -> if (requireAuthentication && ctx.connectionNumber !in authenticated) {
                Reply.Document(WireServer.error(13, "Unauthorized", "command ${ctx.commandName} requires authentication"))
            } else {
                next(ctx, db, cmd)
            }
        }
    }

    /** True when the server connection numbered [connectionNumber] has authenticated. */
    fun isAuthenticated(connectionNumber: Int): Boolean = connectionNumber in authenticated

    private fun decorateHello(ctx: RequestContext, cmd: BsonDocument, reply: BsonDocument): BsonDocument {
        var out = reply
        val mechsFor = cmd["saslSupportedMechs"]?.takeIf { it.isString }?.asString()?.value
        if (mechsFor != null) {
            users[mechsFor]?.let { u ->
                out = out.clone().append("saslSupportedMechs", BsonArray(u.mechanisms.map { BsonString(it) }))
            }
        }
        val spec = cmd["speculativeAuthenticate"] as? BsonDocument
        if (spec != null && spec.containsKey("saslStart")) {
            val db = spec["db"]?.takeIf { it.isString }?.asString()?.value ?: "admin"
            val r = saslStart(ctx.connectionNumber, db, spec)
            if (r["ok"]?.asNumber()?.intValue() == 1) {
                speculative.incrementAndGet()
                r.remove("ok")
                out = out.clone().append("speculativeAuthenticate", r)
            }
        }
        return out
    }

    private class Conversation(
        val user: ScramUser,
        val keys: StoredScramKeys,
        val mechanism: ScramMechanism,
        val clientFirstBare: String,
        val serverFirst: String,
        val nonce: String,
        val skipEmptyExchange: Boolean,
    ) {
        var proven = false
    }

    private fun saslStart(connection: Int, db: String, cmd: BsonDocument): BsonDocument {
        val mechanism = cmd["mechanism"]?.takeIf { it.isString }?.asString()?.value
            ?: return WireServer.error(2, "BadValue", "saslStart needs a mechanism")
        val lib = ScramMechanism.byName(mechanism)
            ?: return WireServer.error(2, "BadValue", "Received authentication for mechanism $mechanism which is not enabled")
        val payload = payload(cmd) ?: return WireServer.error(2, "BadValue", "saslStart needs a payload")
        if (!payload.startsWith("n,,")) return WireServer.error(17, "ProtocolError", "SCRAM: unsupported gs2 header")
        val bare = payload.substring(3)
        val attrs = attributes(bare)
        val username = attrs["n"]?.replace("=2C", ",")?.replace("=3D", "=")
        val clientNonce = attrs["r"]
        if (username == null || clientNonce == null) return WireServer.error(17, "ProtocolError", "SCRAM: bad client-first message")
        val user = users["$db.$username"]
        val keys = user?.keys?.get(mechanism)
        if (user == null || keys == null) {
            failures.incrementAndGet()
            return authFailed()
        }
        val nonce = clientNonce + Base64.getEncoder().encodeToString(ByteArray(24).also { random.nextBytes(it) })
        val serverFirst = "r=$nonce,s=${Base64.getEncoder().encodeToString(keys.salt)},i=${keys.iterations}"
        val skip = (cmd["options"] as? BsonDocument)?.get("skipEmptyExchange")?.let { it.isBoolean && it.asBoolean().value } == true
        val id = conversationIds.incrementAndGet()
        conversations[connection to id] = Conversation(user, keys, lib, bare, serverFirst, nonce, skip)
        return BsonDocument("conversationId", BsonInt32(id)).append("done", BsonBoolean.FALSE)
            .append("payload", BsonBinary(serverFirst.toByteArray())).append("ok", BsonInt32(1))
    }

    private fun saslContinue(connection: Int, cmd: BsonDocument): BsonDocument {
        val id = cmd["conversationId"]?.takeIf { it.isNumber }?.asNumber()?.intValue()
            ?: return WireServer.error(2, "BadValue", "saslContinue needs a conversationId")
        val conv = conversations[connection to id] ?: return WireServer.error(17, "ProtocolError", "No SASL session state found")
        val payload = payload(cmd) ?: ""
        if (conv.proven) {
            conversations.remove(connection to id)
            return done(id, ByteArray(0))
        }
        val attrs = attributes(payload)
        val proof = attrs["p"]?.let { Base64.getDecoder().decode(it) }
        if (attrs["r"] != conv.nonce || proof == null || attrs["c"] != "biws") {
            conversations.remove(connection to id)
            failures.incrementAndGet()
            return authFailed()
        }
        val withoutProof = payload.substring(0, payload.lastIndexOf(",p="))
        val authMessage = "${conv.clientFirstBare},${conv.serverFirst},$withoutProof"
        val clientSignature = ScramFunctions.hmac(conv.mechanism, conv.keys.storedKey, authMessage.toByteArray())
        val clientKey = ByteArray(proof.size) { (proof[it].toInt() xor clientSignature[it % clientSignature.size].toInt()).toByte() }
        if (proof.size != clientSignature.size || !MessageDigest.isEqual(ScramFunctions.hash(conv.mechanism, clientKey), conv.keys.storedKey)) {
            conversations.remove(connection to id)
            failures.incrementAndGet()
            return authFailed()
        }
        val serverSignature = ScramFunctions.hmac(conv.mechanism, conv.keys.serverKey, authMessage.toByteArray())
        if (forgeServerSignature) serverSignature[0] = (serverSignature[0].toInt() xor 0x5a).toByte()
        val serverFinal = "v=${Base64.getEncoder().encodeToString(serverSignature)}".toByteArray()
        authenticated.add(connection)
        successes.incrementAndGet()
        conv.proven = true
        return if (conv.skipEmptyExchange) {
            conversations.remove(connection to id)
            done(id, serverFinal)
        } else {
            BsonDocument("conversationId", BsonInt32(id)).append("done", BsonBoolean.FALSE)
                .append("payload", BsonBinary(serverFinal)).append("ok", BsonInt32(1))
        }
    }

    private fun done(id: Int, payload: ByteArray) = BsonDocument("conversationId", BsonInt32(id)).append("done", BsonBoolean.TRUE)
        .append("payload", BsonBinary(payload)).append("ok", BsonInt32(1))

    private fun authFailed() = WireServer.error(18, "AuthenticationFailed", "Authentication failed.")

    private fun payload(cmd: BsonDocument): String? {
        val p = cmd["payload"] ?: return null
        return when {
            p.isBinary -> String(p.asBinary().data)
            p.isString -> p.asString().value
            else -> null
        }
    }

    private fun attributes(message: String): Map<String, String> =
        message.split(',').filter { it.length >= 2 && it[1] == '=' }.associate { it.substring(0, 1) to it.substring(2) }
}
