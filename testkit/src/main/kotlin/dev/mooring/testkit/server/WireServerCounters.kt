package dev.mooring.testkit.server

import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicInteger

/** Live counters of a [WireServer]. Thread-safe; values only grow except [currentlyOpen]. */
class WireServerCounters internal constructor() {
    private val opened = AtomicInteger()
    private val closed = AtomicInteger()
    private val commands = ConcurrentHashMap<String, AtomicInteger>()

    /** Connections accepted so far. */
    val connectionsOpened: Int get() = opened.get()

    /** Connections closed so far (by either side). */
    val connectionsClosed: Int get() = closed.get()

    /** Connections open right now. */
    val currentlyOpen: Int get() = opened.get() - closed.get()

    /** How many commands named [name] arrived (exact name as sent, e.g. `isMaster`, `hello`). */
    fun commandCount(name: String): Int = commands[name]?.get() ?: 0

    /** Every command name seen, with its count. */
    fun commandCounts(): Map<String, Int> = commands.mapValues { it.value.get() }

    private val compressed = ConcurrentHashMap<String, AtomicInteger>()
    private val tlsFailures = AtomicInteger()

    /** How many commands named [name] arrived inside OP_COMPRESSED. */
    fun compressedCommandCount(name: String): Int = compressed[name]?.get() ?: 0

    /** Accepted connections whose TLS handshake failed. */
    val tlsHandshakeFailures: Int get() = tlsFailures.get()

    internal fun compressedCommand(name: String) { compressed.computeIfAbsent(name) { AtomicInteger() }.incrementAndGet() }
    internal fun tlsHandshakeFailed() { tlsFailures.incrementAndGet() }
    internal fun opened(): Int = opened.incrementAndGet()
    internal fun closed() { closed.incrementAndGet() }
    internal fun command(name: String) { commands.computeIfAbsent(name) { AtomicInteger() }.incrementAndGet() }
}
