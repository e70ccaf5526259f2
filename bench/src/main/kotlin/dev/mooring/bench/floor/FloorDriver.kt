package dev.mooring.bench.floor

import dev.mooring.bench.measure.CallerWindow
import dev.mooring.bench.measure.PlatformCallers
import dev.mooring.bench.workload.TaskIterations
import dev.mooring.bench.workload.WorkloadTask
import dev.mooring.bench.worker.CellCommand
import dev.mooring.bench.worker.LibraryDriver
import dev.mooring.bench.worker.NotApplicable
import java.net.InetSocketAddress
import java.net.URI
import java.nio.ByteBuffer
import java.nio.ByteOrder
import java.nio.channels.SocketChannel

/**
 * The floor of the thread-per-connection model: what a ping costs a client that does nothing
 * but the I/O. `min(callers, maxPoolSize)` platform threads, each owning one blocking
 * [SocketChannel] to the server (opened before the window, no handshake), write the same
 * pre-encoded OP_MSG `{ping: 1, $db: "admin"}` ([FloorPing]) and read the reply: its 4-byte
 * length, then that many bytes, which are discarded. No pool, no BSON decoding, no events, no
 * monitoring. Callers above maxPoolSize are not simulated (there is nothing for them to queue
 * on); the row's `callers` is the cell's, its `connectionsCreated` the number of threads.
 */
class FloorDriver : LibraryDriver {
    override fun ping(cmd: CellCommand): Map<String, Double> {
        val threads = minOf(cmd.callers, cmd.maxPoolSize)
        val address = serverAddress(cmd.target)
        val request = FloorPing.encoded()
        val window = CallerWindow(threads, cmd.serverPid)
        val channels = (0 until threads).map { openChannel(address) }
        try {
            PlatformCallers.run(window, threads, "floor-caller", cmd.warmupMs, cmd.measureMs, joinGraceMs = STOP_GRACE_MS) { i ->
                val ch = channels[i]
                val out = request.duplicate()
                val header = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN)
                var body = ByteBuffer.allocate(1024)
                while (!window.stop) {
                    val t0 = System.nanoTime()
                    out.clear()
                    while (out.hasRemaining()) ch.write(out)
                    header.clear()
                    readFully(ch, header)
                    val length = header.getInt(0)
                    check(length in 16..48 * 1024 * 1024) { "reply length $length is not a MongoDB message" }
                    if (body.capacity() < length - 4) body = ByteBuffer.allocate(length - 4)
                    body.clear().limit(length - 4)
                    readFully(ch, body)
                    window.record(i, System.nanoTime() - t0)
                }
            }
        } finally {
            channels.forEach { runCatching { it.close() } }
        }
        return window.summarize(withWait = false) + ("connectionsCreated" to threads.toDouble())
    }

    /** The decoding tasks ([FloorFind]); the others have nothing to decode. */
    override fun workload(cmd: CellCommand): Map<String, Double> {
        if (!cmd.scenario.hasFloor) throw NotApplicable("the floor runs the decoding tasks only")
        val task = WorkloadTask.of(cmd.scenario)
        return TaskIterations.measure(cmd, task, FloorFind(task, cmd.target, cmd.compressor == "zstd", TaskIterations.operationsOf(cmd, task)))
    }

    override fun coldStart(cmd: CellCommand): Map<String, Double> = throw NotApplicable(NO_CLIENT)
    override fun poolOnly(cmd: CellCommand): Map<String, Double> = throw NotApplicable(NO_CLIENT)
    override fun waiters(cmd: CellCommand): Map<String, Double> = throw NotApplicable(NO_CLIENT)
    override fun failover(cmd: CellCommand): Map<String, Double> = throw NotApplicable(NO_CLIENT)

    companion object {
        /** How long the threads may take to finish their last ping after the window; then their sockets are closed. */
        private const val STOP_GRACE_MS = 10_000L
        private const val NO_CLIENT = "the floor is a raw socket loop: it has no client, pool or topology"

        /** The first host of a `mongodb://host:port/?…` benchmark URI. */
        internal fun serverAddress(uri: String): InetSocketAddress {
            val u = URI(uri.substringBefore("/?").substringBefore(',') + "/")
            require(u.scheme == "mongodb" && u.host != null) { "the floor needs a mongodb://host:port URI, got $uri" }
            return InetSocketAddress(u.host, if (u.port > 0) u.port else 27017)
        }

        private fun openChannel(address: InetSocketAddress): SocketChannel =
            SocketChannel.open(address).apply { socket().tcpNoDelay = true }

        private fun readFully(ch: SocketChannel, buf: ByteBuffer) {
            while (buf.hasRemaining()) {
                if (ch.read(buf) < 0) throw java.io.EOFException("the server closed the connection")
            }
        }
    }
}
