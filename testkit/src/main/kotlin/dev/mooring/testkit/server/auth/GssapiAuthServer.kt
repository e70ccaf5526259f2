package dev.mooring.testkit.server.auth

import dev.mooring.testkit.server.RequestContext
import dev.mooring.testkit.server.WireServer
import org.bson.BsonBinary
import org.bson.BsonBoolean
import org.bson.BsonDocument
import org.bson.BsonInt32
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.atomic.AtomicInteger

/**
 * Server-side GSSAPI framing without a KDC: `saslStart` (mechanism GSSAPI, on `$external`) and
 * `saslContinue` carry opaque tokens; the server checks each client token against the scripted
 * [rounds] and answers with the round's server token, `done` after the last round. A mismatch is
 * `AuthenticationFailed`. What a real server would learn from the Kerberos tokens (the client
 * principal) is [principal]. Thread-safe; conversations are per connection.
 */
class GssapiAuthServer(private val principal: String, private val rounds: List<Round>) {
    /** One exchange: the token the client must send, what the server answers. */
    class Round(val clientToken: ByteArray, val serverToken: ByteArray)

    init {
        require(rounds.isNotEmpty()) { "a GSSAPI conversation has at least one round" }
    }

    private val positions = ConcurrentHashMap<Int, Int>()
    private val ids = AtomicInteger()

    /** Counters and authenticated connections. */
    val gate: AuthGate = AuthGate(setOf("saslStart", "saslContinue"))

    /** Every SASL command received (saslStart and saslContinue), in order. */
    val commands: MutableList<BsonDocument> = CopyOnWriteArrayList()

    /** Installs this mechanism on [server], in front of its current handler. */
    fun install(server: WireServer) {
        server.handler = gate.handler(server.handler) { ctx, db, cmd -> answer(ctx, db, cmd) }
    }

    private fun answer(ctx: RequestContext, db: String, cmd: BsonDocument): BsonDocument {
        commands.add(cmd.clone().append("\$db", org.bson.BsonString(db)))
        val position = if (ctx.commandName == "saslStart") {
            val mechanism = cmd["mechanism"]?.takeIf { it.isString }?.asString()?.value
            if (mechanism != "GSSAPI") return WireServer.error(2, "BadValue", "Received authentication for mechanism $mechanism which is not enabled")
            if (db != "\$external") return gate.refused("GSSAPI must use the \$external database")
            0
        } else {
            positions[ctx.connectionNumber] ?: return WireServer.error(17, "ProtocolError", "No SASL session state found")
        }
        val token = AuthGate.payload(cmd) ?: return WireServer.error(2, "BadValue", "SASL command without payload")
        val round = rounds[position]
        if (!round.clientToken.contentEquals(token)) {
            positions.remove(ctx.connectionNumber)
            return gate.refused("GSS-API error: unexpected token in round ${position + 1}")
        }
        val last = position == rounds.size - 1
        if (last) {
            positions.remove(ctx.connectionNumber)
            gate.succeeded(ctx.connectionNumber, principal)
        } else {
            positions[ctx.connectionNumber] = position + 1
        }
        return BsonDocument("conversationId", BsonInt32(ids.incrementAndGet())).append("done", BsonBoolean(last))
            .append("payload", BsonBinary(round.serverToken)).append("ok", BsonInt32(1))
    }
}
