package dev.mooring.cmap.internal.command

import dev.mooring.events.InternalMooringApi
import dev.mooring.cmap.MongoCommandException
import org.bson.BsonArray
import org.bson.BsonDocument

/**
 * Not API ([InternalMooringApi], for `sdam`'s tracing): which commands command monitoring must redact (Command Logging and
 * Monitoring, "Security"). Pure; thread-safe.
 */
@InternalMooringApi
public object CommandRedaction {
    private val sensitive = setOf(
        "authenticate", "saslstart", "saslcontinue", "getnonce", "createuser", "updateuser",
        "copydbgetnonce", "copydbsaslstart", "copydb",
    )
    private val hello = setOf("hello", "ismaster")

    /**
     * True when [commandName] (case-insensitive) is security-sensitive, or is `hello` / legacy
     * hello and [command] carries `speculativeAuthenticate`.
     */
    public fun isSensitive(commandName: String, command: BsonDocument): Boolean {
        val name = commandName.lowercase()
        if (name in sensitive) return true
        return name in hello && command.containsKey("speculativeAuthenticate")
    }

    /**
     * The failure to report for a sensitive command: a [MongoCommandException] keeps only its
     * `ok`, `code`, `codeName` and `errorLabels` (the server's message and any other reply
     * fields are dropped); other errors carry no reply and are returned as they are.
     */
    internal fun redactFailure(failure: Throwable): Throwable {
        if (failure !is MongoCommandException) return failure
        val r = failure.response
        val kept = BsonDocument()
        for (key in listOf("ok", "code", "codeName")) r[key]?.let { kept[key] = it }
        (r["errorLabels"] as? BsonArray)?.let { kept["errorLabels"] = it }
        return MongoCommandException(kept, failure.address, failure.generation, failure.handshakeCompleted)
    }
}
