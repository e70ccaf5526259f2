package dev.mooring.testkit.proxy

import dev.mooring.events.ServerAddress
import java.io.DataInputStream
import java.io.IOException
import java.io.OutputStream
import java.net.InetAddress
import java.net.InetSocketAddress
import java.net.ServerSocket
import java.net.Socket
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.atomic.AtomicInteger

/**
 * A SOCKS5 proxy server (RFC 1928 CONNECT, with "no authentication" or RFC 1929
 * username/password) on 127.0.0.1, for tests, written independently of the client.
 *
 * With [credentials] it requires username/password authentication (a client offering only "no
 * authentication" gets method 0xFF, wrong credentials get status 1); without, it picks "no
 * authentication" and a client offering only username/password gets 0xFF. Every CONNECT is
 * recorded in [requests] (what the client asked for, unresolved) before the proxy connects.
 * Destinations: a `host:port` key in [map] (as socks5srv.py's `--map`) goes to its target;
 * otherwise a domain name is resolved here, and only loopback addresses are connected to (anything
 * else is refused with REP 2, "not allowed by ruleset"). [forcedReply] makes every CONNECT fail
 * with that REP code. Accepted connections are relayed by two daemon threads each.
 *
 * Thread-safety: every member may be called from any thread. [close] stops listening, resets
 * every relayed connection and is idempotent.
 */
class Socks5Proxy private constructor(
    /** The username/password the proxy requires, or null for no authentication. */
    val credentials: Pair<String, String>?,
    /** Destinations rewritten before connecting: `"host:port"` (lower case) to a real address. */
    val map: Map<String, ServerAddress>,
) : AutoCloseable {
    private val listener = ServerSocket()
    private val connections = ConcurrentHashMap.newKeySet<ProxiedConnection>()
    private val sockets = ConcurrentHashMap.newKeySet<Socket>()
    private val recorded = CopyOnWriteArrayList<Socks5Request>()
    private val noFaults = FaultTable()

    @Volatile private var closed = false

    /** When set, every CONNECT is answered with this REP code (1..8) instead of connecting. */
    @Volatile var forcedReply: Int? = null

    /** The loopback port the proxy listens on. */
    val port: Int get() = listener.localPort

    /** What clients asked this proxy for, in order. */
    val requests: List<Socks5Request> get() = recorded.toList()

    private val rejected = AtomicInteger()

    /**
     * Handshakes whose authentication failed (wrong username/password or no acceptable method),
     * counted before the refusal is sent, so a client that has seen it finds it here.
     */
    val rejectedHandshakes: Int get() = rejected.get()

    private fun listen() {
        listener.reuseAddress = true
        listener.bind(InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 128)
        Thread({ acceptLoop() }, "socks5-proxy-$port-accept").apply { isDaemon = true; start() }
    }

    private fun acceptLoop() {
        while (!closed) {
            val client = try {
                listener.accept()
            } catch (_: IOException) {
                return
            }
            sockets += client
            Thread({ serve(client) }, "socks5-proxy-$port-handshake").apply { isDaemon = true; start() }
        }
    }

    private fun serve(client: Socket) {
        try {
            client.tcpNoDelay = true
            client.soTimeout = HANDSHAKE_TIMEOUT_MILLIS
            val input = DataInputStream(client.getInputStream())
            val output = client.getOutputStream()
            val (methods, username) = negotiate(input, output) ?: return shut(client)
            val request = readConnect(input, methods, username) ?: return shut(client)
            recorded += request
            val upstream = open(request, output) ?: return shut(client)
            client.soTimeout = 0
            output.write(byteArrayOf(5, 0, 0, 1, 127, 0, 0, 1, (upstream.localPort ushr 8).toByte(), upstream.localPort.toByte()))
            output.flush()
            val conn = ProxiedConnection(client, upstream, noFaults) { connections.remove(it) }
            connections += conn
            sockets -= client
            if (closed) conn.reset() else conn.start("socks5-proxy-$port-relay")
        } catch (_: IOException) {
            shut(client)
        }
    }

    /** Method negotiation and, if required, authentication; null when the client is turned away. */
    private fun negotiate(input: DataInputStream, output: OutputStream): Pair<List<Int>, String?>? {
        if (input.readUnsignedByte() != 5) return null
        val methods = List(input.readUnsignedByte()) { input.readUnsignedByte() }
        val wanted = if (credentials != null) 2 else 0
        if (wanted !in methods) {
            rejected.incrementAndGet()
            output.write(byteArrayOf(5, 0xFF.toByte()))
            output.flush()
            return null
        }
        output.write(byteArrayOf(5, wanted.toByte()))
        output.flush()
        if (credentials == null) return methods to null
        if (input.readUnsignedByte() != 1) return null
        val user = String(ByteArray(input.readUnsignedByte()).also { input.readFully(it) }, Charsets.UTF_8)
        val pass = String(ByteArray(input.readUnsignedByte()).also { input.readFully(it) }, Charsets.UTF_8)
        val ok = user == credentials.first && pass == credentials.second
        // Counted before the reply: a client that has read the refusal must find it counted.
        if (!ok) rejected.incrementAndGet()
        output.write(byteArrayOf(1, if (ok) 0 else 1))
        output.flush()
        return if (ok) methods to user else null
    }

    private fun readConnect(input: DataInputStream, methods: List<Int>, username: String?): Socks5Request? {
        if (input.readUnsignedByte() != 5 || input.readUnsignedByte() != 1 || input.readUnsignedByte() != 0) return null
        val type = when (input.readUnsignedByte()) {
            1 -> Socks5AddressType.IPV4
            3 -> Socks5AddressType.DOMAIN
            4 -> Socks5AddressType.IPV6
            else -> return null
        }
        val host = when (type) {
            Socks5AddressType.DOMAIN -> String(ByteArray(input.readUnsignedByte()).also { input.readFully(it) }, Charsets.UTF_8)
            Socks5AddressType.IPV4 -> InetAddress.getByAddress(ByteArray(4).also { input.readFully(it) }).hostAddress
            Socks5AddressType.IPV6 -> InetAddress.getByAddress(ByteArray(16).also { input.readFully(it) }).hostAddress
        }
        val port = input.readUnsignedShort()
        return Socks5Request(type, host, port, methods, username)
    }

    /** Connects to the request's destination, or answers with a failure REP and returns null. */
    private fun open(request: Socks5Request, output: OutputStream): Socket? {
        fun refuse(rep: Int): Socket? {
            output.write(byteArrayOf(5, rep.toByte(), 0, 1, 0, 0, 0, 0, 0, 0))
            output.flush()
            return null
        }
        forcedReply?.let { return refuse(it) }
        val mapped = map["${request.host.lowercase()}:${request.port}"]
        val destination = if (mapped != null) {
            InetSocketAddress(InetAddress.getByName(mapped.host), mapped.port)
        } else {
            val ip = try {
                InetAddress.getAllByName(request.host).firstOrNull { it.isLoopbackAddress }
            } catch (_: IOException) {
                return refuse(4) // host unreachable
            } ?: return refuse(2) // loopback only
            InetSocketAddress(ip, request.port)
        }
        val upstream = Socket()
        return try {
            upstream.tcpNoDelay = true
            upstream.connect(destination, CONNECT_TIMEOUT_MILLIS)
            upstream
        } catch (_: IOException) {
            runCatching { upstream.close() }
            refuse(5) // connection refused
        }
    }

    private fun shut(client: Socket) {
        sockets -= client
        runCatching { client.close() }
    }

    override fun close() {
        if (closed) return
        closed = true
        runCatching { listener.close() }
        sockets.toList().forEach { runCatching { it.close() } }
        val open = connections.toList()
        open.forEach { it.reset() }
        open.forEach { it.join(JOIN_MILLIS) }
    }

    override fun toString(): String = "Socks5Proxy(127.0.0.1:$port, auth=${credentials != null}, requests=${recorded.size})"

    companion object {
        private const val HANDSHAKE_TIMEOUT_MILLIS = 10_000
        private const val CONNECT_TIMEOUT_MILLIS = 5_000
        private const val JOIN_MILLIS = 2_000L

        /**
         * Starts a proxy on 127.0.0.1 and a free port, requiring [credentials] (username to
         * password) when given, rewriting destinations with [map].
         */
        fun start(credentials: Pair<String, String>? = null, map: Map<String, ServerAddress> = emptyMap()): Socks5Proxy =
            Socks5Proxy(credentials, map.mapKeys { it.key.lowercase() }).also { it.listen() }
    }
}

/** How a client named the destination: RFC 1928's ATYP. */
enum class Socks5AddressType { IPV4, DOMAIN, IPV6 }

/** One CONNECT request as the client sent it (the host unresolved), with the methods it offered and the user it authenticated as. */
data class Socks5Request(
    val addressType: Socks5AddressType,
    val host: String,
    val port: Int,
    val offeredMethods: List<Int>,
    val username: String?,
)
