package dev.mooring.testkit.proxy

import dev.mooring.events.ServerAddress
import java.io.IOException
import java.net.InetAddress
import java.net.InetSocketAddress
import java.net.ServerSocket
import java.net.Socket
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicLong

/**
 * A fault-injecting TCP proxy for tests: listens on a loopback port and relays every accepted
 * connection to [target], applying a [Fault] per [Direction] to the bytes in flight — added
 * latency, blackhole (accept, never answer), reset, close after N bytes, garbage, bandwidth limit.
 *
 * ```
 * FaultProxy.start(ServerAddress("127.0.0.1", serverPort)).use { proxy ->
 *     val uri = "mongodb://${proxy.address}/?directConnection=true"
 *     proxy[Direction.DOWNSTREAM] = Fault.CloseAfterBytes(20)   // replies are cut mid-message
 *     proxy.kill(); proxy.revive()                                // refused, then back on the same port
 * }
 * ```
 *
 * Each relayed connection uses two daemon threads (blocking sockets, so timing faults are
 * exact and a blocked read never starves a coroutine dispatcher). [kill] closes the listening
 * socket (new connections are refused) and resets every open connection, as when a server
 * process dies; [revive] listens on the same port again.
 *
 * Thread-safety: every member may be called from any thread. A fault change applies to open
 * connections at their next chunk. After [close] the proxy holds no socket and no thread;
 * [kill], [revive] and setting faults then throw [IllegalStateException].
 */
class FaultProxy private constructor(
    /** Where connections are relayed to. */
    val target: ServerAddress,
    private val requestedPort: Int,
) : AutoCloseable {
    private val faults = FaultTable()
    private val connections = ConcurrentHashMap.newKeySet<ProxiedConnection>()
    private val accepted = AtomicLong()
    private val lock = Any()
    private var listener: ServerSocket? = null
    private var acceptor: Thread? = null
    private var closed = false

    /** The loopback port this proxy listens on (the same across [kill] and [revive]). */
    @Volatile
    var port: Int = 0
        private set

    /** `127.0.0.1:<port>`: the address clients should use. */
    val address: ServerAddress get() = ServerAddress("127.0.0.1", port)

    /**
     * Connections accepted since start, counted when accepted: before anything is relayed on
     * them, but possibly after the client's `connect` returned (the kernel completes the TCP
     * handshake first), so wait for it rather than asserting it right after a bare connect.
     */
    val acceptedConnections: Long get() = accepted.get()

    /**
     * Connections currently relayed. A connection the proxy ends (a fault, [resetAll], [kill], or
     * the target closing its side) is removed before its sockets close; one the client closes is
     * removed when the proxy notices, so wait for that rather than asserting it right after a
     * client-side close.
     */
    val openConnections: Int get() = connections.size

    /** True between [kill] and [revive]. */
    val isKilled: Boolean get() = synchronized(lock) { listener == null && !closed }

    /** The fault currently applied in [direction]. */
    operator fun get(direction: Direction): Fault = faults[direction].fault

    /** Applies [fault] to bytes flowing in [direction] from now on. */
    operator fun set(direction: Direction, fault: Fault) {
        synchronized(lock) { check(!closed) { "the fault proxy is closed" } }
        faults[direction] = fault
    }

    /** Applies [fault] in both directions. */
    fun setBoth(fault: Fault) {
        this[Direction.UPSTREAM] = fault
        this[Direction.DOWNSTREAM] = fault
    }

    /** Lifts every fault (both directions back to [Fault.None]). */
    fun heal() = setBoth(Fault.None)

    /** Resets every open connection now; new connections are still accepted. */
    fun resetAll() {
        connections.toList().forEach { it.reset() }
    }

    /** Stops listening (connections are refused) and resets every open connection. */
    fun kill() {
        val l = synchronized(lock) {
            check(!closed) { "the fault proxy is closed" }
            listener.also { listener = null }
        }
        runCatching { l?.close() }
        acceptor?.join(JOIN_MILLIS)
        resetAll()
    }

    /** Listens again on the same port after [kill]; no-op when not killed. */
    fun revive() {
        synchronized(lock) {
            check(!closed) { "the fault proxy is closed" }
            if (listener != null) return
            listen()
        }
    }

    override fun close() {
        val l = synchronized(lock) {
            if (closed) return
            closed = true
            listener.also { listener = null }
        }
        runCatching { l?.close() }
        acceptor?.join(JOIN_MILLIS)
        val open = connections.toList()
        open.forEach { it.reset() }
        open.forEach { it.join(JOIN_MILLIS) }
    }

    override fun toString(): String = "FaultProxy($address -> $target, open=$openConnections)"

    /** Under [lock]: binds the listening socket and starts the accept thread. */
    private fun listen() {
        val server = ServerSocket()
        try {
            server.reuseAddress = true
            server.bind(InetSocketAddress(InetAddress.getLoopbackAddress(), if (port != 0) port else requestedPort), BACKLOG)
        } catch (e: IOException) {
            server.close()
            throw e
        }
        port = server.localPort
        listener = server
        acceptor = Thread({ acceptLoop(server) }, "fault-proxy-$port-accept").apply {
            isDaemon = true
            start()
        }
    }

    private fun acceptLoop(server: ServerSocket) {
        while (true) {
            val client = try {
                server.accept()
            } catch (_: IOException) {
                return
            }
            accepted.incrementAndGet()
            relay(client)
        }
    }

    private fun relay(client: Socket) {
        val upstream = Socket()
        try {
            client.tcpNoDelay = true
            upstream.tcpNoDelay = true
            upstream.connect(InetSocketAddress(target.host, target.port), CONNECT_TIMEOUT_MILLIS)
        } catch (_: IOException) {
            // the target is down: the client sees its connection reset, as with a dead server
            runCatching { client.setSoLinger(true, 0) }
            runCatching { client.close() }
            runCatching { upstream.close() }
            return
        }
        val conn = ProxiedConnection(client, upstream, faults) { connections.remove(it) }
        connections += conn
        val stillOpen = synchronized(lock) { listener != null }
        if (!stillOpen) {
            conn.reset()
            return
        }
        conn.start("fault-proxy-$port-${accepted.get()}")
    }

    companion object {
        private const val BACKLOG = 512
        private const val CONNECT_TIMEOUT_MILLIS = 2_000
        private const val JOIN_MILLIS = 2_000L

        /**
         * Starts a proxy on 127.0.0.1:[port] (0: any free port) relaying to [target].
         * Throws [java.io.IOException] when the port cannot be bound.
         */
        fun start(target: ServerAddress, port: Int = 0): FaultProxy {
            require(port in 0..65535) { "port must be in 0..65535, was $port" }
            val proxy = FaultProxy(target, port)
            synchronized(proxy.lock) { proxy.listen() }
            return proxy
        }
    }
}
