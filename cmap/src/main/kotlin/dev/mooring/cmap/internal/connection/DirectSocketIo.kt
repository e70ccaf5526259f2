package dev.mooring.cmap.internal.connection

import dev.mooring.cmap.internal.connection.tls.NetIo
import io.ktor.network.selector.SelectInterest
import io.ktor.network.selector.Selectable
import io.ktor.network.selector.SelectorManager
import io.ktor.network.sockets.Socket
import java.io.EOFException
import java.nio.ByteBuffer
import java.nio.channels.ByteChannel

/**
 * Reads and writes a connected Ktor socket's non-blocking channel on the calling coroutine,
 * suspending on the socket's [SelectorManager] (Ktor's selector) only when the channel would
 * block. Replaces Ktor's reader/writer pump coroutines and their byte channels, so a
 * request/reply costs the selector's wake-up and one dispatch instead of four thread hops.
 *
 * Reads are buffered in one direct buffer per connection; bytes after a message (an exhaust
 * stream's next reply) stay buffered for the next read.
 *
 * Not thread-safe: one reader and one writer at a time (the connection is single-track).
 * Cancellation while suspended leaves the socket unusable (the owner closes it). Closing the
 * socket from another thread fails a read or write in progress with an [java.io.IOException] (or
 * Ktor's closed-channel cancellation, which the connection maps to a network error too).
 */
internal class DirectSocketIo internal constructor(
    private val selectable: Selectable,
    /** [selectable]'s channel (a test may pass a wrapper of it that observes the reads). */
    private val channel: ByteChannel,
    private val selector: SelectorManager,
) : NetIo {
    /** The event loop this socket's waiters are resumed on, when its selector is an [EventLoopGroup]. */
    val homeLoop: EventLoop? = (selector as? EventLoopGroup)?.homeOf(selectable)

    /** Unread bytes are between position and limit (the buffer stays in read mode). */
    private val buffer: ByteBuffer = ByteBuffer.allocateDirect(BUFFER_SIZE).limit(0)

    /** The array [sendView] wraps: the connection writes from one reused send buffer, so one view serves every message. */
    private var sendArray: ByteArray? = null
    private var sendView: ByteBuffer? = null

    /** Writes all of [bytes] from [offset] for [length] bytes. */
    suspend fun write(bytes: ByteArray, offset: Int, length: Int) {
        var view = sendView
        if (view == null || sendArray !== bytes) {
            view = ByteBuffer.wrap(bytes)
            sendView = view
            sendArray = bytes
        }
        view.clear()
        view.position(offset)
        view.limit(offset + length)
        return writeFully(view)
    }

    override suspend fun writeFully(src: ByteBuffer) {
        // Usually the socket takes the whole message at once: no wait, no continuation.
        channel.write(src)
        if (src.hasRemaining()) return writeRest(src)
        replyAwaited = true
    }

    private suspend fun writeRest(src: ByteBuffer) {
        while (src.hasRemaining()) {
            await(SelectInterest.WRITE)
            channel.write(src)
        }
        replyAwaited = true
    }

    /**
     * Set by a write, cleared by the next read from the socket: that read wants the peer's answer to
     * what was just written, which cannot be there yet (it takes the peer a round trip), so it waits
     * for readiness first instead of trying a read that returns nothing (a wasted `read` system call
     * per request; the selector reports at once if the answer did come already).
     */
    private var replyAwaited = false

    override suspend fun readAvailable(dst: ByteBuffer): Int {
        if (!dst.hasRemaining()) return 0
        if (buffer.hasRemaining()) {
            val n = minOf(buffer.remaining(), dst.remaining())
            val slice = buffer.slice().limit(n)
            dst.put(slice)
            buffer.position(buffer.position() + n)
            return n
        }
        return try {
            val before = dst.position()
            fill(dst)
            dst.position() - before
        } catch (_: EOFException) {
            -1
        }
    }

    /** Reads exactly [length] bytes into [dst] at [offset]; [EOFException] when the peer closes first. */
    suspend fun readFully(dst: ByteArray, offset: Int, length: Int) {
        // Usually a reply's body arrived with its header: served from the buffer, no continuation.
        if (buffer.remaining() >= length) {
            buffer.get(dst, offset, length)
            return
        }
        return readFullySlow(dst, offset, length)
    }

    private suspend fun readFullySlow(dst: ByteArray, offset: Int, length: Int) {
        var at = offset
        val end = offset + length
        while (at < end) {
            val buffered = buffer.remaining()
            if (buffered > 0) {
                val n = minOf(buffered, end - at)
                buffer.get(dst, at, n)
                at += n
            } else if (end - at >= BUFFER_SIZE) {
                // a large body: read straight into the destination
                val direct = ByteBuffer.wrap(dst, at, end - at)
                while (direct.hasRemaining()) fill(direct)
                at = end
            } else {
                buffer.clear()
                try {
                    fill(buffer)
                } finally {
                    buffer.flip()
                }
            }
        }
    }

    /** Reads at least one byte into [dst], suspending while none is available. Inline: no frame of its own. */
    @Suppress("NOTHING_TO_INLINE")
    private suspend inline fun fill(dst: ByteBuffer) {
        // No yield() before waiting: on Dispatchers.Default every dispatch may unpark an idle
        // worker, which costs more than the selector's wake-up it could save.
        if (replyAwaited) {
            replyAwaited = false
            await(SelectInterest.READ)
        }
        while (true) {
            val n = channel.read(dst)
            if (n > 0) return
            if (n < 0) throw EOFException("connection closed by the server")
            await(SelectInterest.READ)
        }
    }

    @Suppress("NOTHING_TO_INLINE") // inline: no frame of its own (it runs in the reader's or writer's)
    private suspend inline fun await(interest: SelectInterest) {
        selectable.interestOp(interest, true)
        try {
            selector.select(selectable, interest)
        } finally {
            selectable.interestOp(interest, false)
        }
    }

    companion object {
        private const val BUFFER_SIZE = 16 * 1024

        /**
         * The direct I/O for [socket]. Every socket [Connector] opens (Ktor's `aSocket(selector).tcp().connect`)
         * is a selectable, non-blocking NIO socket channel; anything else is a programming error.
         */
        fun of(socket: Socket, selector: SelectorManager): DirectSocketIo {
            val selectable = requireNotNull(socket as? Selectable) { "not a selectable NIO socket: $socket" }
            val channel = requireNotNull(selectable.channel as? ByteChannel) { "not a byte channel: ${selectable.channel}" }
            require(!selectable.channel.isBlocking) { "the socket's channel is in blocking mode: $socket" }
            return DirectSocketIo(selectable, channel, selector)
        }
    }
}
