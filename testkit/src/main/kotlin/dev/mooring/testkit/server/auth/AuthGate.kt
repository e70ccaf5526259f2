package dev.mooring.testkit.server.auth

import dev.mooring.testkit.server.CommandHandler
import dev.mooring.testkit.server.Reply
import dev.mooring.testkit.server.RequestContext
import dev.mooring.testkit.server.WireServer
import org.bson.BsonDocument
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicInteger

/**
 * The part every server-side mechanism shares, as mongod does it: which connection authenticated
 * as whom, counters, and a handler that answers the mechanism's own commands and refuses other
 * commands (except hello, ping, buildInfo, endSessions) on connections that did not
 * authenticate, with `Unauthorized` (13). Thread-safe.
 */
class AuthGate(private val ownCommands: Set<String>) {
    private val users = ConcurrentHashMap<Int, String>()
    private val successes = AtomicInteger()
    private val failures = AtomicInteger()

    /** Conversations that ended with the client authenticated. */
    val successfulAuthentications: Int get() = successes.get()

    /** Conversations the server refused. */
    val failedAuthentications: Int get() = failures.get()

    /** The user the server connection numbered [connection] authenticated as, or null. */
    fun userOf(connection: Int): String? = users[connection]

    /** Records a success for [connection] as [user]. */
    fun succeeded(connection: Int, user: String) {
        users[connection] = user
        successes.incrementAndGet()
    }

    /** Records a refusal and returns mongod's `AuthenticationFailed` (18) reply. */
    fun refused(message: String = "Authentication failed."): BsonDocument {
        failures.incrementAndGet()
        return WireServer.error(18, "AuthenticationFailed", message)
    }

    /** A handler answering [ownCommands] with [answer] and enforcing authentication, then delegating to [next]. */
    fun handler(next: CommandHandler, answer: suspend (RequestContext, String, BsonDocument) -> BsonDocument): CommandHandler = { ctx, db, cmd ->
        when (ctx.commandName) {
            in ownCommands -> Reply.Document(answer(ctx, db, cmd))
            "hello", "isMaster", "ismaster", "ping", "buildInfo", "buildinfo", "endSessions" -> next(ctx, db, cmd)
            else -> if (!users.containsKey(ctx.connectionNumber)) {
                Reply.Document(WireServer.error(13, "Unauthorized", "command ${ctx.commandName} requires authentication"))
            } else {
                next(ctx, db, cmd)
            }
        }
    }

    companion object {
        /** The SASL payload of [cmd] as bytes, or null. */
        fun payload(cmd: BsonDocument): ByteArray? {
            val p = cmd["payload"] ?: return null
            return when {
                p.isBinary -> p.asBinary().data
                p.isString -> p.asString().value.toByteArray()
                else -> null
            }
        }
    }
}
