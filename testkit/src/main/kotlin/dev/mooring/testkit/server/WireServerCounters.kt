package dev.mooring.testkit.server

import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicInteger

/**
 * Live counters of a [WireServer]. Thread-safe; values only grow except [currentlyOpen].
 *
 * Ordering: everything the server does that a client can see comes after it is counted. A
 * command is counted when it is read, before it is answered; a connection is counted opened when
 * it is accepted, before anything is answered on it (but possibly after the client's `connect`
 * returned: the kernel completes the TCP handshake before the server accepts); it is counted
 * closed before the server closes its socket. What the server only learns later (a client that
 * closed its connection, or failed a TLS handshake on its side) is counted when the server
 * notices, so a test must wait for it (a bounded poll), not assert it right away. After
 * [WireServer.close] the connection counts are no longer kept exact (its connections are closed
 * first and counted as their coroutines end, if they ever ran).
 */
class WireServerCounters internal constructor() {
    private val opened = AtomicInteger()
    private val closed = AtomicInteger()
    private val commands = ConcurrentHashMap<String, AtomicInteger>()

    /** Connections accepted so far. */
    val connectionsOpened: Int get() = opened.get()

    /** Connections closed so far (by either side). */
    val connectionsClosed: Int get() = closed.get()

    /**
     * Connections open right now. The closed count is read first, so a connection opened and
     * closed meanwhile can never make this smaller than the number that were open when it was read.
     */
    val currentlyOpen: Int get() {
        val c = closed.get()
        return opened.get() - c
    }

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
