package dev.mooring.spec.unified

import dev.mooring.cmap.CommandEvent
import dev.mooring.cmap.CommandStartedEvent
import dev.mooring.events.MooringEvent
import java.util.concurrent.ConcurrentHashMap

/**
 * Which command monitoring events a client entity records (unified test format, "Executing a
 * Test"): not those of [ignored] commands (the client's `ignoreCommandMonitoringEvents`),
 * `configureFailPoint`, nor, unless [observeSensitive], sensitive commands. A `hello` or legacy
 * hello is sensitive when its started event's command was redacted (empty); its outcome is then
 * dropped too, by request id. Thread-safe (events arrive from any connection's coroutine).
 */
class CommandEventFilter(ignored: Collection<String>, private val observeSensitive: Boolean) {
    private val ignoredNames = ignored.toSet() + "configureFailPoint"
    private val redactedRequests = ConcurrentHashMap.newKeySet<Int>()

    /** True when [event] is not a command event, or is one the client records. */
    fun records(event: MooringEvent): Boolean {
        if (event !is CommandEvent) return true
        if (event.commandName in ignoredNames) return false
        if (observeSensitive) return true
        if (event.commandName.lowercase() in SENSITIVE) return false
        if (event.commandName.lowercase() in HELLO) {
            if (event is CommandStartedEvent && event.command.isEmpty()) redactedRequests += event.requestId
            return event.requestId !in redactedRequests
        }
        return true
    }

    private companion object {
        val SENSITIVE = setOf(
            "authenticate", "saslstart", "saslcontinue", "getnonce", "createuser", "updateuser",
            "copydbgetnonce", "copydbsaslstart", "copydb",
        )
        val HELLO = setOf("hello", "ismaster")
    }
}
