package dev.mooring.testkit.dns

import dev.mooring.events.ServerAddress
import org.xbill.DNS.Flags
import org.xbill.DNS.Message
import org.xbill.DNS.Rcode
import org.xbill.DNS.Section
import java.io.DataInputStream
import java.io.DataOutputStream
import java.io.IOException
import java.net.DatagramPacket
import java.net.DatagramSocket
import java.net.InetAddress
import java.net.InetSocketAddress
import java.net.ServerSocket
import java.net.Socket
import java.net.SocketException
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicInteger

/**
 * A DNS server for tests on 127.0.0.1, over UDP and TCP on the same port, answering from a
 * [DnsZone] (authoritative answers, NXDOMAIN for unknown names, no recursion). UDP answers
 * longer than the client's EDNS payload size (512 bytes without EDNS) are truncated with the TC
 * flag, so clients retry over TCP as with a real server. Point a cluster at it with
 * `DnsResolverSettings(server.address)`.
 *
 * Threads: one UDP thread, one TCP accept thread and one thread per TCP connection, all daemon
 * threads owned by the server. [close] closes the sockets and joins the threads. The zone may be
 * changed while the server runs. [queries] counts the questions seen per `name/TYPE`.
 *
 * ```
 * DnsTestServer.start(zone).use { dns -> MongoCluster(uri, DnsResolverSettings(dns.address)) }
 * ```
 */
class DnsTestServer private constructor(
    /** The records served. */
    val zone: DnsZone,
    private val udp: DatagramSocket,
    private val tcp: ServerSocket,
) : AutoCloseable {
    private val threads = ConcurrentHashMap.newKeySet<Thread>()
    private val sockets = ConcurrentHashMap.newKeySet<Socket>()
    private val counts = ConcurrentHashMap<String, AtomicInteger>()

    @Volatile
    private var closed = false

    /** The server's address (`127.0.0.1:<port>`), for `DnsResolverSettings(nameServer = ...)`. */
    val address: ServerAddress = ServerAddress("127.0.0.1", udp.localPort)

    /** How many questions were asked per `name/TYPE` (names lower-case, without the trailing dot). */
    fun queries(): Map<String, Int> = counts.mapValues { it.value.get() }

    /** How many questions were asked for [name] (any case, trailing dot optional) with [type] (`"SRV"`, `"TXT"`, ...). */
    fun queryCount(name: String, type: String): Int = counts["${name.lowercase().removeSuffix(".")}/$type"]?.get() ?: 0

    private fun spawn(name: String, body: () -> Unit) {
        val t = Thread({ try { body() } finally { threads.remove(Thread.currentThread()) } }, name)
        t.isDaemon = true
        threads += t
        t.start()
    }

    private fun serveUdp() {
        val buf = ByteArray(65_535)
        while (!closed) {
            val packet = DatagramPacket(buf, buf.size)
            try {
                udp.receive(packet)
            } catch (e: IOException) {
                if (closed) return else continue
            }
            val query = try { Message(packet.data.copyOf(packet.length)) } catch (e: IOException) { continue }
            val reply = respond(query) ?: continue
            val max = query.opt?.payloadSize?.coerceAtLeast(512) ?: 512
            val bytes = reply.toWire(max)
            try {
                udp.send(DatagramPacket(bytes, bytes.size, packet.socketAddress))
            } catch (e: IOException) {
                if (closed) return
            }
        }
    }

    private fun serveTcp() {
        while (!closed) {
            val s = try { tcp.accept() } catch (e: IOException) { if (closed) return else continue }
            sockets += s
            spawn("dns-test-server-tcp-conn") {
                s.use {
                    try {
                        val input = DataInputStream(s.getInputStream())
                        val output = DataOutputStream(s.getOutputStream())
                        while (!closed) {
                            val len = input.readUnsignedShort()
                            val data = ByteArray(len)
                            input.readFully(data)
                            val reply = respond(Message(data)) ?: continue
                            val bytes = reply.toWire()
                            output.writeShort(bytes.size)
                            output.write(bytes)
                            output.flush()
                        }
                    } catch (e: IOException) {
                        // the client closed the connection, or the server is closing
                    } finally {
                        sockets.remove(s)
                    }
                }
            }
        }
    }

    /** The reply to [query], or null to leave it unanswered. */
    private fun respond(query: Message): Message? {
        val question = query.question ?: return null
        val typeName = org.xbill.DNS.Type.string(question.type)
        counts.computeIfAbsent("${question.name.toString(true).lowercase()}/$typeName") { AtomicInteger() }.incrementAndGet()
        val (rcode, answers) = zone.answer(question.name, question.type) ?: return null
        val reply = Message(query.header.id)
        reply.header.setFlag(Flags.QR.toInt())
        reply.header.setFlag(Flags.AA.toInt())
        if (query.header.getFlag(Flags.RD.toInt())) reply.header.setFlag(Flags.RD.toInt())
        reply.header.rcode = rcode
        reply.addRecord(question, Section.QUESTION)
        if (rcode == Rcode.NOERROR) answers.forEach { reply.addRecord(it, Section.ANSWER) }
        return reply
    }

    /** Closes both sockets and every TCP connection and waits for the server's threads to end. Idempotent. */
    override fun close() {
        if (closed) return
        closed = true
        udp.close()
        tcp.close()
        sockets.forEach { runCatching { it.close() } }
        threads.toList().forEach { it.join(5_000) }
    }

    companion object {
        /**
         * Starts a server for [zone] on a free loopback port (the same number for UDP and TCP),
         * or on [port] when it is not 0. Throws [SocketException] when the port cannot be bound.
         */
        fun start(zone: DnsZone = DnsZone(), port: Int = 0): DnsTestServer {
            val loopback = InetAddress.getByName("127.0.0.1")
            var last: IOException? = null
            repeat(if (port == 0) 20 else 1) {
                val udp = DatagramSocket(null as java.net.SocketAddress?)
                try {
                    udp.bind(InetSocketAddress(loopback, port))
                    val tcp = ServerSocket()
                    try {
                        tcp.reuseAddress = true
                        tcp.bind(InetSocketAddress(loopback, udp.localPort))
                    } catch (e: IOException) {
                        tcp.close()
                        throw e
                    }
                    val server = DnsTestServer(zone, udp, tcp)
                    server.spawn("dns-test-server-udp") { server.serveUdp() }
                    server.spawn("dns-test-server-tcp") { server.serveTcp() }
                    return server
                } catch (e: IOException) {
                    udp.close()
                    last = e
                }
            }
            throw last ?: SocketException("could not bind the DNS test server")
        }
    }
}
