package dev.mooring.testkit.server.auth

import dev.mooring.testkit.server.RequestContext
import dev.mooring.testkit.server.WireServer
import org.bson.BsonBinary
import org.bson.BsonBoolean
import org.bson.BsonDocument
import org.bson.BsonInt32
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.CopyOnWriteArrayList

/**
 * Server-side SASL PLAIN (RFC 4616) as mongod's LDAP proxy does it: one `saslStart` whose payload
 * is `[authzid] NUL authcid NUL passwd`, checked against the users added here; the authzid must
 * be empty or equal the authcid. Records whether each attempt came over TLS. Thread-safe.
 */
class PlainAuthServer {
    private val users = ConcurrentHashMap<String, String>()

    /** Counters and authenticated connections. */
    val gate: AuthGate = AuthGate(setOf("saslStart", "saslContinue"))

    /** For each saslStart received: whether its connection used TLS. */
    val attemptsOverTls: MutableList<Boolean> = CopyOnWriteArrayList()

    /** Adds [username] with [password] (on any database: LDAP users live outside MongoDB). */
    fun addUser(username: String, password: String) {
        users[username] = password
    }

    /** Installs this mechanism on [server], in front of its current handler. */
    fun install(server: WireServer) {
        server.handler = gate.handler(server.handler) { ctx, _, cmd -> answer(ctx, cmd) }
    }

    private fun answer(ctx: RequestContext, cmd: BsonDocument): BsonDocument {
        if (ctx.commandName != "saslStart") return WireServer.error(17, "ProtocolError", "No SASL session state found")
        val mechanism = cmd["mechanism"]?.takeIf { it.isString }?.asString()?.value
        if (mechanism != "PLAIN") return WireServer.error(2, "BadValue", "Received authentication for mechanism $mechanism which is not enabled")
        attemptsOverTls.add(ctx.tls)
        val payload = AuthGate.payload(cmd) ?: return WireServer.error(2, "BadValue", "saslStart needs a payload")
        val parts = splitNul(payload) ?: return gate.refused("Incorrectly formatted PLAIN client message")
        val (authzid, user, password) = parts
        if (authzid.isNotEmpty() && authzid != user) return gate.refused("SASL authorization identity must match authentication identity")
        if (users[user] != password) return gate.refused()
        gate.succeeded(ctx.connectionNumber, user)
        return BsonDocument("conversationId", BsonInt32(1)).append("done", BsonBoolean.TRUE)
            .append("payload", BsonBinary(ByteArray(0))).append("ok", BsonInt32(1))
    }

    private fun splitNul(bytes: ByteArray): List<String>? {
        val first = bytes.indexOf(0)
        if (first < 0) return null
        val second = (first + 1 until bytes.size).firstOrNull { bytes[it] == 0.toByte() } ?: return null
        return listOf(
            String(bytes, 0, first, Charsets.UTF_8),
            String(bytes, first + 1, second - first - 1, Charsets.UTF_8),
            String(bytes, second + 1, bytes.size - second - 1, Charsets.UTF_8),
        )
    }
}
