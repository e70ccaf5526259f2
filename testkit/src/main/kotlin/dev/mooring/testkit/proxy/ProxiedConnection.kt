package dev.mooring.testkit.proxy

import java.io.IOException
import java.net.Socket
import java.util.concurrent.atomic.AtomicBoolean

/**
 * One client connection relayed by a [FaultProxy]: two pump threads, one per [Direction],
 * each applying the proxy's current fault to every chunk. [reset] and [close] are idempotent
 * and may be called from any thread; either ends both pumps.
 */
internal class ProxiedConnection(
    private val client: Socket,
    private val server: Socket,
    private val faults: FaultTable,
    private val onClosed: (ProxiedConnection) -> Unit,
) {
    private val closed = AtomicBoolean(false)
    private val pumps = ArrayList<Thread>(2)

    fun start(name: String) {
        pumps += Thread({ pump(Direction.UPSTREAM, client, server) }, "$name-up").apply { isDaemon = true }
        pumps += Thread({ pump(Direction.DOWNSTREAM, server, client) }, "$name-down").apply { isDaemon = true }
        pumps.forEach { it.start() }
    }

    /** Resets the client side (RST) and closes the server side. */
    fun reset() = shut(rst = true)

    /** Closes both sides in an orderly way (FIN). */
    fun close() = shut(rst = false)

    /** Waits (bounded) for both pumps to finish after [reset] or [close]. */
    fun join(millis: Long) = pumps.forEach { it.join(millis) }

    private fun shut(rst: Boolean) {
        if (!closed.compareAndSet(false, true)) return
        // deregistered before the sockets close: a client that has seen its connection end must
        // not find it still counted among the proxy's open connections
        onClosed(this)
        if (rst) runCatching { client.setSoLinger(true, 0) }
        runCatching { client.close() }
        runCatching { server.close() }
    }

    private fun pump(direction: Direction, from: Socket, to: Socket) {
        val buf = ByteArray(CHUNK)
        var counted: FaultTable.Entry? = null
        var count = 0L
        try {
            val input = from.getInputStream()
            val output = to.getOutputStream()
            while (!closed.get()) {
                val entry = faults[direction]
                val limit = (entry.fault as? Fault.Bandwidth)?.let { minOf(CHUNK.toLong(), maxOf(1L, it.bytesPerSecond / 20)).toInt() } ?: CHUNK
                val n = input.read(buf, 0, limit)
                if (n < 0) break
                // the fault may have changed while we were blocked reading
                val now = faults[direction]
                when (val fault = now.fault) {
                    Fault.None -> output.write(buf, 0, n)
                    is Fault.Latency -> {
                        Thread.sleep(fault.millis)
                        output.write(buf, 0, n)
                    }
                    Fault.Blackhole -> Unit
                    Fault.Corrupt -> {
                        for (i in 0 until n) buf[i] = (buf[i].toInt() xor 0x5A).toByte()
                        output.write(buf, 0, n)
                    }
                    Fault.Reset -> {
                        reset()
                        return
                    }
                    is Fault.CloseAfterBytes -> {
                        if (counted !== now) {
                            counted = now
                            count = 0
                        }
                        val allowed = (fault.bytes - count).coerceAtLeast(0)
                        if (n <= allowed) {
                            output.write(buf, 0, n)
                            count += n
                        } else {
                            output.write(buf, 0, allowed.toInt())
                            output.flush()
                            reset()
                            return
                        }
                    }
                    is Fault.Bandwidth -> {
                        output.write(buf, 0, n)
                        Thread.sleep(maxOf(1L, n * 1000L / fault.bytesPerSecond))
                    }
                }
                output.flush()
            }
            close()
        } catch (_: IOException) {
            reset()
        } catch (_: InterruptedException) {
            reset()
        }
    }

    private companion object {
        const val CHUNK = 16 * 1024
    }
}
