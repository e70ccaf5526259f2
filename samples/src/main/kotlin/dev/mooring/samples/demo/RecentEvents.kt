package dev.mooring.samples.demo

import dev.mooring.cmap.CommandEvent
import dev.mooring.cmap.ConnectionCheckOutStartedEvent
import dev.mooring.cmap.ConnectionCheckedInEvent
import dev.mooring.cmap.ConnectionCheckedOutEvent
import dev.mooring.driver.ChangeStreamDocument
import dev.mooring.events.MooringEvent
import dev.mooring.events.ServerAddress
import dev.mooring.sdam.ServerHeartbeatFailedEvent
import dev.mooring.sdam.ServerHeartbeatStartedEvent
import dev.mooring.sdam.ServerHeartbeatSucceededEvent
import java.util.ArrayDeque

/**
 * The live view's "Recent events" panel: the last [capacity] lines, oldest first.
 *
 * By default it shows what the demo exists to show and nothing that floods it: topology and
 * server events, pool and connection events (not each checkout and check-in), failed heartbeats
 * one by one and successful heartbeats as one summary line per server, updated in place
 * (`Heartbeats 127.0.0.1:40001 ok x12, last 0.4 ms (streaming)`). Command events (hundreds a
 * second under load) appear only while [showCommands] is on (`--command-events`, key `c`).
 * A change stream's events ([change], `--watch`) are one summary line per namespace, updated in
 * place like the heartbeats; [note] adds a line of the demo's own (a stream opened or failed).
 *
 * Thread-safe: [record] runs inside the event publisher (it is quick), [lines] on the view's
 * coroutine.
 */
class RecentEvents(private val capacity: Int = 10, showCommands: Boolean = false) {
    /** One line of the panel. */
    data class Line(val timestampMillis: Long, val text: String)

    private class Entry(var line: Line, val heartbeatsOf: ServerAddress?, var heartbeats: Int = 0, val changesOf: String? = null)

    private val entries = ArrayDeque<Entry>()

    /** Whether command events (CommandStarted/Succeeded/Failed) are shown. */
    @Volatile
    var showCommands: Boolean = showCommands

    /** Flips [showCommands]; returns the new value. */
    fun toggleCommands(): Boolean = synchronized(entries) { (!showCommands).also { showCommands = it } }

    /** The panel's lines, oldest first. */
    fun lines(): List<Line> = synchronized(entries) { entries.map { it.line } }

    /** Takes [event] into the panel if it is one it shows. */
    fun record(event: MooringEvent) {
        when (event) {
            is ConnectionCheckOutStartedEvent, is ConnectionCheckedOutEvent, is ConnectionCheckedInEvent,
            is ServerHeartbeatStartedEvent -> return
            is CommandEvent -> if (showCommands) add(event, null)
            is ServerHeartbeatSucceededEvent -> heartbeat(event)
            is ServerHeartbeatFailedEvent -> synchronized(entries) {
                // the next success starts a new summary line, below the failure
                entries.removeIf { it.heartbeatsOf == event.address }
                add(event, null)
            }
            else -> add(event, null)
        }
    }

    /** Counts [change], the [count]th event of the change stream on [namespace], in that stream's summary line. */
    fun change(namespace: String, change: ChangeStreamDocument<*>, count: Long): Unit = synchronized(entries) {
        val entry = entries.firstOrNull { it.changesOf == namespace }
            ?: Entry(Line(0, ""), null, changesOf = namespace).also { append(it) }
        val key = change.documentKey?.get("_id")?.let { " _id " + if (it.isString) it.asString().value else it.toString() } ?: ""
        entry.line = Line(System.currentTimeMillis(), "Change stream $namespace: $count events, last ${change.operationType}$key")
    }

    /** Adds a line of the demo's own, [text] at the current time. */
    fun note(text: String) {
        append(Entry(Line(System.currentTimeMillis(), text), null))
    }

    private fun heartbeat(event: ServerHeartbeatSucceededEvent) = synchronized(entries) {
        val entry = entries.firstOrNull { it.heartbeatsOf == event.address } ?: add(event, event.address)
        entry.heartbeats++
        val mode = if (event.awaited) "streaming" else "polling"
        entry.line = Line(
            event.timestampMillis,
            "Heartbeats ${event.address} ok x${entry.heartbeats}, last ${formatMillis(event.durationNanos / 1e6)} ($mode)",
        )
    }

    private fun add(event: MooringEvent, heartbeatsOf: ServerAddress?): Entry =
        append(Entry(Line(event.timestampMillis, EventText.of(event)), heartbeatsOf))

    private fun append(entry: Entry): Entry = synchronized(entries) {
        entries.addLast(entry)
        while (entries.size > capacity) entries.removeFirst()
        entry
    }
}
