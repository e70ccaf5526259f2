package dev.mooring.cmap.connection

import dev.mooring.cmap.internal.connection.Connector
import dev.mooring.cmap.internal.connection.DirectSocketIo
import dev.mooring.cmap.internal.connection.SocketTransport
import dev.mooring.cmap.internal.wire.WireFormatException
import dev.mooring.events.ServerAddress
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import dev.mooring.cmap.internal.connection.EventLoopGroup
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.delay
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeout
import java.io.EOFException
import java.io.IOException
import java.net.InetAddress
import java.net.ServerSocket
import java.net.Socket
import java.nio.ByteBuffer
import java.nio.ByteOrder
import java.nio.channels.ByteChannel
import java.util.concurrent.atomic.AtomicLong
import io.ktor.network.selector.Selectable
import java.util.concurrent.CompletableFuture
import java.util.concurrent.TimeUnit
import kotlin.concurrent.thread

/**
 * The plain-text transport reads and writes the socket on the calling coroutine: messages that
 * arrive together, large messages, partial writes, end of stream and a close from another
 * coroutine must all behave as they did over Ktor's byte channels.
 */
class DirectSocketIoSpec : FunSpec({
    /** A message with the standard header: messageLength, requestId, responseTo, opCode, then [bodyLength] pattern bytes. */
    fun message(requestId: Int, bodyLength: Int): ByteArray {
        val b = ByteBuffer.allocate(16 + bodyLength).order(ByteOrder.LITTLE_ENDIAN)
        b.putInt(16 + bodyLength).putInt(requestId).putInt(0).putInt(2013)
        for (i in 0 until bodyLength) b.put((i * 31 + requestId).toByte())
        return b.array()
    }

    /** Accepts the one client the test connects on a daemon thread and runs [serve] with it; the future completes when it has. */
    fun acceptOne(server: ServerSocket, serve: (Socket) -> Unit): CompletableFuture<Unit> {
        val served = CompletableFuture<Unit>()
        thread(isDaemon = true) {
            try {
                server.accept().use { serve(it) }
                served.complete(Unit)
            } catch (t: Throwable) {
                served.completeExceptionally(t)
            }
        }
        return served
    }

    /** Runs [serve] on a thread for the one client the test connects, then runs [client] with a transport to it. */
    suspend fun withPeer(serve: (Socket) -> Unit, onLoops: Boolean = false, client: suspend (SocketTransport) -> Unit) {
        val selector = EventLoopGroup(1)
        ServerSocket(0, 1, InetAddress.getLoopbackAddress()).use { server ->
            val served = acceptOne(server, serve)
            val socket = Connector.connect(selector, ServerAddress("127.0.0.1", server.localPort))
            val transport = SocketTransport(socket, selector)
            try {
                withTimeout(30_000) { if (onLoops) withContext(selector) { client(transport) } else client(transport) }
            } finally {
                transport.close()
                selector.close()
            }
            served.get(30, TimeUnit.SECONDS)
        }
    }

    /**
     * As [withPeer], on the loops, with a [DirectSocketIo] whose channel [observe] wraps (so the test
     * sees every read the I/O makes of the socket).
     */
    suspend fun withDirectIo(serve: (Socket) -> Unit, observe: (ByteChannel) -> ByteChannel, client: suspend (DirectSocketIo) -> Unit) {
        val loops = EventLoopGroup(1)
        ServerSocket(0, 1, InetAddress.getLoopbackAddress()).use { server ->
            val served = acceptOne(server, serve)
            val socket = Connector.connect(loops, ServerAddress("127.0.0.1", server.localPort))
            val selectable = socket as Selectable
            val io = DirectSocketIo(selectable, observe(selectable.channel as ByteChannel), loops)
            try {
                withTimeout(30_000) { withContext(loops) { client(io) } }
            } finally {
                socket.close()
                loops.close()
            }
            served.get(30, TimeUnit.SECONDS)
        }
    }

    test("two messages that arrive in one segment are read as two messages") {
        val first = message(1, 40)
        val second = message(2, 70)
        withPeer({ s -> s.getOutputStream().apply { write(first + second); flush() } }) { t ->
            val a = t.readMessage(1_000_000)
            a.header.requestId shouldBe 1
            (a.headerBytes + a.body).toList() shouldBe first.toList()
            val b = t.readMessage(1_000_000)
            b.header.requestId shouldBe 2
            (b.headerBytes + b.body).toList() shouldBe second.toList()
        }
    }

    test("the read after a request waits for the reply instead of trying the socket first") {
        val rounds = 50
        val emptyReads = AtomicLong()
        withDirectIo({ s ->
            val input = s.getInputStream()
            val request = ByteArray(20)
            repeat(rounds) {
                var n = 0
                while (n < 20) n += input.read(request, n, 20 - n).also { r -> if (r < 0) throw EOFException() }
                Thread.sleep(2) // the reply comes a round trip later
                s.getOutputStream().apply { write(request); flush() }
            }
        }, { channel -> ObservedReads(channel) { n -> if (n == 0) emptyReads.incrementAndGet() } }) { io ->
            // On the loops (the reader is resumed by the loop that saw the reply): from another thread
            // a readiness the loop saw just before the reply was read can still resume the next reader once.
            repeat(rounds) { i ->
                val request = message(i, 4)
                io.write(request, 0, request.size)
                val reply = ByteArray(request.size)
                io.readFully(reply, 0, reply.size)
                ByteBuffer.wrap(reply).order(ByteOrder.LITTLE_ENDIAN).getInt(4) shouldBe i
            }
            emptyReads.get() shouldBe 0L
        }
    }

    test("a message larger than the read buffer, sent in small pieces, arrives intact") {
        val big = message(7, 200_000)
        withPeer({ s ->
            val out = s.getOutputStream()
            var at = 0
            while (at < big.size) {
                val n = minOf(7_001, big.size - at)
                out.write(big, at, n)
                out.flush()
                at += n
                if (at % 5 == 0) Thread.sleep(1)
            }
        }) { t ->
            val m = t.readMessage(1_000_000)
            m.header.messageLength shouldBe big.size
            (m.headerBytes + m.body).toList() shouldBe big.toList()
        }
    }

    test("a write larger than the socket buffers completes once the peer reads") {
        val big = message(3, 8_000_000)
        val received = CompletableFuture<ByteArray>()
        withPeer({ s ->
            Thread.sleep(200) // let the client's writes fill the buffers and wait for the selector
            received.complete(s.getInputStream().readNBytes(big.size))
        }) { t ->
            t.write(big)
            withContext(Dispatchers.IO) { received.get(30, TimeUnit.SECONDS) }.toList() shouldBe big.toList()
        }
    }

    test("the peer closing before a whole message arrived is an EOFException") {
        val m = message(1, 100)
        withPeer({ s -> s.getOutputStream().apply { write(m, 0, 50); flush() } }) { t ->
            shouldThrow<EOFException> { t.readMessage(1_000_000) }
        }
    }

    test("a bad messageLength fails before the body is read") {
        val m = message(1, 10)
        ByteBuffer.wrap(m).order(ByteOrder.LITTLE_ENDIAN).putInt(0, 5)
        withPeer({ s -> s.getOutputStream().apply { write(m); flush() } }) { t ->
            shouldThrow<WireFormatException> { t.readMessage(1_000_000) }
        }
    }

    test("closing the transport from another coroutine fails a read that is waiting") {
        val release = CompletableFuture<Unit>()
        withPeer({ _ -> release.get(30, TimeUnit.SECONDS) }) { t ->
            val reading = kotlinx.coroutines.coroutineScope {
                val r = async { runCatching { t.readMessage(1_000_000) } }
                delay(200)
                t.close()
                r.await()
            }
            release.complete(Unit)
            // Ktor fails the selector wait with a ClosedChannelException or its cancellation twin;
            // the connection maps both to a network error
            val e = reading.exceptionOrNull()
            (e is IOException || e is kotlinx.coroutines.CancellationException) shouldBe true
        }
    }
})

/** [channel], telling [onRead] what each read returned. */
private class ObservedReads(private val channel: ByteChannel, private val onRead: (Int) -> Unit) : ByteChannel by channel {
    override fun read(dst: ByteBuffer): Int = channel.read(dst).also(onRead)
}
