package dev.mooring.cmap.connection

import dev.mooring.cmap.internal.connection.Connector
import dev.mooring.cmap.internal.connection.EventLoopGroup
import dev.mooring.cmap.internal.connection.EventLoopProbe
import dev.mooring.cmap.internal.connection.SocketTransport
import dev.mooring.events.ServerAddress
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.ints.shouldBeLessThan
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldStartWith
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.Job
import kotlinx.coroutines.async
import kotlinx.coroutines.launch
import kotlinx.coroutines.withContext
import io.kotest.matchers.string.shouldNotStartWith
import kotlinx.coroutines.cancel
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.withTimeout
import java.io.DataInputStream
import java.net.InetAddress
import java.net.ServerSocket
import java.net.Socket
import java.nio.ByteBuffer
import java.nio.ByteOrder
import java.util.concurrent.CompletableFuture
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicLong
import kotlin.concurrent.thread
import kotlin.coroutines.EmptyCoroutineContext
import kotlin.time.Duration.Companion.seconds

/**
 * The event loops: a dispatch from any thread reaches a loop blocked in select; a coroutine of
 * the group waiting for its socket is resumed by the loop itself (no task per reply), one of
 * another dispatcher through that dispatcher; a closed socket and a closed group fail their
 * waiters and release their descriptors at once.
 */
class EventLoopGroupSpec : FunSpec({
    timeout = 60.seconds.inWholeMilliseconds // a loop that misses a wake-up hangs: fail instead

    fun message(requestId: Int): ByteArray =
        ByteBuffer.allocate(20).order(ByteOrder.LITTLE_ENDIAN).putInt(20).putInt(requestId).putInt(0).putInt(2013).putInt(requestId).array()

    /**
     * Echoes every 20-byte message until the client closes, each [replyDelayMs] after it arrived;
     * completes [eof] when it sees the end of the stream.
     */
    fun echoServer(server: ServerSocket, eof: CompletableFuture<Unit>, replyDelayMs: Long = 0) = thread(isDaemon = true) {
        try {
            server.accept().use { s: Socket ->
                val input = DataInputStream(s.getInputStream())
                val buf = ByteArray(20)
                while (true) {
                    var n = 0
                    while (n < 20) {
                        val r = input.read(buf, n, 20 - n)
                        if (r < 0) {
                            eof.complete(Unit)
                            return@thread
                        }
                        n += r
                    }
                    if (replyDelayMs > 0) Thread.sleep(replyDelayMs)
                    s.getOutputStream().apply { write(buf); flush() }
                }
            }
        } catch (t: Throwable) {
            eof.completeExceptionally(t)
        }
    }

    suspend fun <T> withEcho(group: EventLoopGroup, replyDelayMs: Long = 0, block: suspend (SocketTransport, CompletableFuture<Unit>) -> T): T =
        ServerSocket(0, 1, InetAddress.getLoopbackAddress()).use { server ->
            val eof = CompletableFuture<Unit>()
            echoServer(server, eof, replyDelayMs)
            val socket = withTimeout(10_000) { Connector.connect(group, ServerAddress("127.0.0.1", server.localPort)) }
            val transport = SocketTransport(socket, group)
            try {
                block(transport, eof)
            } finally {
                transport.close()
            }
        }

    test("a task dispatched from another thread runs although the loop is blocked in select") {
        val group = EventLoopGroup(1)
        try {
            repeat(2_000) { i ->
                if (i % 100 == 0) Thread.sleep(2) // let the loop block in select now and then
                val ran = CompletableFuture<String>()
                group.dispatch(EmptyCoroutineContext, Runnable { ran.complete(Thread.currentThread().name) })
                ran.get(10, TimeUnit.SECONDS) shouldStartWith "mooring-loop-"
            }
        } finally {
            group.close()
        }
    }

    test("a coroutine of the group is resumed with its reply by the loop itself, not through a task") {
        val turns = CountingProbe()
        val group = EventLoopGroup(2, turns)
        try {
            withEcho(group) { t, _ ->
                withTimeout(30_000) {
                    withContext(group) {
                        val tasksBefore = turns.tasks.get()
                        repeat(500) { i ->
                            t.write(message(i))
                            t.readMessage(1_000).header.requestId shouldBe i
                            // on a loop thread: the socket's home loop once a read had to wait for it
                            Thread.currentThread().name shouldStartWith "mooring-loop-"
                        }
                        // 500 replies, each resumed by the selecting loop: no task each (a few for other work at most)
                        (turns.tasks.get() - tasksBefore).toInt() shouldBeLessThan 50
                    }
                }
            }
        } finally {
            group.close()
        }
    }

    test("a coroutine that waits for a socket is resumed on the socket's home loop, whichever loop it ran on") {
        val group = EventLoopGroup(2)
        try {
            // each reply comes 20 ms after its request, so the reads really wait for the socket: with an
            // instant echo every reply could race the suspension on a loaded machine, and the coroutine
            // never had to move (the test then saw no resumption at all)
            withEcho(group, replyDelayMs = 20) { t, _ ->
                val home = t.homeLoop!!
                val other = group.loopAt(if (home === group.loopAt(0)) 1 else 0)
                val threads = CompletableDeferred<List<Thread>>()
                // Start on the other loop: the waiter follows the connection (one loop collecting
                // every caller was the unfairness of the first event-loop version).
                other.execute {
                    CoroutineScope(group).launch(start = CoroutineStart.UNDISPATCHED) {
                        val seen = ArrayList<Thread>()
                        check(Thread.currentThread() === other.thread)
                        repeat(20) { i ->
                            t.write(message(i))
                            t.readMessage(1_000).header.requestId shouldBe i
                            seen += Thread.currentThread()
                        }
                        threads.complete(seen)
                    }.invokeOnCompletion { e -> if (e != null) threads.completeExceptionally(e) }
                }
                // A reply that races the suspension (the echo is fast) is taken on the thread that was
                // suspending; from the first real wait on, the coroutine is on the home loop and stays.
                val seen = withTimeout(30_000) { threads.await() }
                seen.dropWhile { it === other.thread }.distinct() shouldBe listOf(home.thread)
            }
        } finally {
            group.close()
        }
    }

    test("bytes and an end of stream that nobody waits for wake the loop once, not in a loop") {
        val turns = CountingProbe()
        val group = EventLoopGroup(1, turns)
        val sendExtra = CountDownLatch(1)
        val hangUp = CountDownLatch(1)
        try {
            ServerSocket(0, 1, InetAddress.getLoopbackAddress()).use { server ->
                val peer = thread(isDaemon = true) {
                    server.accept().use { s ->
                        val input = DataInputStream(s.getInputStream())
                        val request = ByteArray(20).also { input.readFully(it) }
                        s.getOutputStream().apply { write(request); flush() } // the reply a reader waits for
                        sendExtra.await()
                        s.getOutputStream().apply { write(message(99)); flush() } // a message nobody reads yet
                        hangUp.await()
                    }
                }
                val socket = withTimeout(10_000) { Connector.connect(group, ServerAddress("127.0.0.1", server.localPort)) }
                val t = SocketTransport(socket, group)
                try {
                    withTimeout(30_000) {
                        withContext(group) {
                            t.write(message(1))
                            t.readMessage(1_000).header.requestId shouldBe 1 // waited: read interest stays after the reply
                        }
                        for (event in listOf(sendExtra, hangUp)) {
                            val before = turns.selects.get()
                            event.countDown()
                            // a loop that kept selecting a ready socket nobody reads returns thousands of times here
                            withContext(Dispatchers.IO) { Thread.sleep(300) }
                            (turns.selects.get() - before).toInt() shouldBeLessThan 20
                        }
                        withContext(group) { t.readMessage(1_000).header.requestId shouldBe 99 }
                    }
                } finally {
                    t.close()
                    peer.join(10_000)
                }
            }
        } finally {
            sendExtra.countDown()
            hangUp.countDown()
            group.close()
        }
    }

    test("a request written from another thread by a coroutine of the group (the Java facade's start) does not wake the loop to watch for its reply") {
        val turns = CountingProbe()
        val group = EventLoopGroup(1, turns)
        val scope = CoroutineScope(group + SupervisorJob())
        try {
            // replies 1 ms late, as over a network: the reader always waits before its reply comes
            withEcho(group, replyDelayMs = 1) { t, _ ->
                // the first wait registers the read interest; it stays while each reply finds its reader
                scope.async(start = CoroutineStart.UNDISPATCHED) { t.write(message(-1)); t.readMessage(1_000) }.await()
                val selectsBefore = turns.selects.get()
                repeat(300) { i ->
                    val reply = scope.async(start = CoroutineStart.UNDISPATCHED) {
                        Thread.currentThread().name shouldNotStartWith "mooring-loop-" // written from this thread
                        t.write(message(i))
                        t.readMessage(1_000).header.requestId // on the loop that saw the reply (or here, if it came at once)
                    }
                    reply.await() shouldBe i
                }
                // one select per reply; a published interest would add a wake-up each (about 600)
                (turns.selects.get() - selectsBefore).toInt() shouldBeLessThan 450
            }
        } finally {
            scope.cancel()
            group.close()
        }
    }

    test("a coroutine of another dispatcher is resumed through that dispatcher") {
        val group = EventLoopGroup(1)
        try {
            withEcho(group) { t, _ ->
                withTimeout(30_000) {
                    withContext(Dispatchers.Default) {
                        repeat(50) { i ->
                            t.write(message(i))
                            t.readMessage(1_000).header.requestId shouldBe i
                            Thread.currentThread().name shouldStartWith "DefaultDispatcher-worker"
                        }
                    }
                }
            }
        } finally {
            group.close()
        }
    }

    test("closing a socket fails its waiter and releases the descriptor at once, though the loop is idle") {
        val group = EventLoopGroup(1)
        try {
            withEcho(group) { t, eof ->
                withTimeout(30_000) {
                    val waiting = CompletableDeferred<Unit>()
                    val reader = async(group) {
                        waiting.complete(Unit)
                        runCatching { t.readMessage(1_000) }
                    }
                    waiting.await()
                    Thread.sleep(50) // the reader is registered and the loop is blocked in select
                    t.close()
                    reader.await().isFailure shouldBe true
                    // the peer sees the end of the stream: the loop deregistered the key, so the descriptor is closed
                    withContext(Dispatchers.IO) { eof.get(10, TimeUnit.SECONDS) }
                }
            }
        } finally {
            group.close()
        }
    }

    test("closing the group fails waiters, stops every thread, and cancels coroutines dispatched afterwards") {
        val group = EventLoopGroup(2)
        withEcho(group) { t, _ ->
            withTimeout(30_000) {
                val reader = async(Dispatchers.Default) { runCatching { t.readMessage(1_000) } }
                Thread.sleep(50)
                group.close()
                reader.await().isFailure shouldBe true
                group.job.join()
                val late = CoroutineScope(Job()).launch(group) { error("must not run as an active coroutine") }
                late.join()
                late.isCancelled shouldBe true
            }
        }
        group.threads().count { it.isAlive } shouldBe 0
    }

    test("a connect cancelled before the peer answered releases its socket at once, though the loop is idle") {
        val group = EventLoopGroup(1)
        // A listener whose accept queue is full drops further SYNs: the next connect stays pending.
        ServerSocket(0, 1, InetAddress.getLoopbackAddress()).use { server ->
            val peer = java.net.InetSocketAddress(InetAddress.getLoopbackAddress(), server.localPort)
            val queued = ArrayList<Socket>()
            try {
                while (queued.size < 16) {
                    val s = Socket()
                    try {
                        s.connect(peer, 300)
                    } catch (_: java.net.SocketTimeoutException) {
                        s.close()
                        break
                    }
                    queued += s
                }
                val loop = group.loopAt(0)
                val connecting = CoroutineScope(Dispatchers.Default).launch {
                    Connector.connect(group, ServerAddress("127.0.0.1", server.localPort))
                }
                withTimeout(10.seconds) { while (loop.registeredKeys != 1) kotlinx.coroutines.delay(5) }
                connecting.cancel()
                connecting.join()
                // Ktor closed the channel, which is released only when the loop deregisters its key
                withTimeout(5.seconds) { while (loop.registeredKeys != 0) kotlinx.coroutines.delay(5) }
            } finally {
                queued.forEach { it.close() }
                group.close()
            }
        }
    }
})

/** Counts the loops' tasks and selects. */
private class CountingProbe : EventLoopProbe {
    val tasks = AtomicLong()
    val selects = AtomicLong()

    override fun taskRun() {
        tasks.incrementAndGet()
    }

    override fun selectReturned() {
        selects.incrementAndGet()
    }
}
