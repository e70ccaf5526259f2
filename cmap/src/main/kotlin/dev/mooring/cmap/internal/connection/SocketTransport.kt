package dev.mooring.cmap.internal.connection

import dev.mooring.cmap.internal.connection.tls.TlsChannel
import dev.mooring.cmap.internal.wire.MessageHeader
import io.ktor.network.selector.SelectorManager
import io.ktor.network.sockets.Socket
import javax.net.ssl.SSLEngine

/** A message as read from the socket: its validated header, the header bytes and the body. */
internal class RawMessage(val header: MessageHeader, val headerBytes: ByteArray, val body: ByteArray)

/**
 * Byte transport over one connected socket (as [Connector] opens them: a non-blocking NIO
 * channel), in plain text or, with an [SSLEngine], TLS (see [TlsChannel]; call [startTls] before
 * anything else).
 *
 * Both go through [DirectSocketIo] (TLS as the network side of the [TlsChannel]): the calling
 * coroutine reads and writes the socket's channel itself and suspends on the [SelectorManager]
 * only when the socket would block, so a round trip costs no pump coroutine and at most one
 * dispatch.
 *
 * Not thread-safe: the owning connection's single-track rule guarantees one reader and one
 * writer at a time. [close] is idempotent and does not suspend; it fails a read or write in
 * progress with an [java.io.IOException].
 */
internal class SocketTransport(private val socket: Socket, selector: SelectorManager, engine: SSLEngine? = null) {
    private val io: DirectSocketIo = DirectSocketIo.of(socket, selector)
    private val tls: TlsChannel? = engine?.let { TlsChannel(it, io) }

    /** The event loop that resumes whoever waits for this socket (null when it has none). */
    val homeLoop: EventLoop? get() = io.homeLoop

    /** Plain-text direct I/O (TLS runs over [io] inside [tls]). */
    private val direct: DirectSocketIo? = if (tls == null) io else null

    /**
     * The socket's bytes below TLS, for a SOCKS5 handshake before [startTls]. Not to be used
     * after [startTls] (it would corrupt the TLS stream).
     */
    val plain: dev.mooring.cmap.internal.connection.socks.Socks5Io = object : dev.mooring.cmap.internal.connection.socks.Socks5Io {
        override suspend fun write(bytes: ByteArray) = io.write(bytes, 0, bytes.size)

        override suspend fun readFully(dst: ByteArray) = io.readFully(dst, 0, dst.size)
    }

    /** Runs the TLS handshake (no-op in plain text). */
    suspend fun startTls() {
        tls?.handshake()
    }

    // Only tail calls below, so the plain-text direct path allocates no continuation here.
    suspend fun write(bytes: ByteArray, offset: Int = 0, length: Int = bytes.size) {
        if (direct != null) return direct.write(bytes, offset, length)
        return tls!!.write(if (offset == 0 && length == bytes.size) bytes else bytes.copyOfRange(offset, offset + length))
    }

    internal suspend fun readFully(dst: ByteArray) {
        if (direct != null) return direct.readFully(dst, 0, dst.size)
        return tls!!.readFully(dst, 0, dst.size)
    }

    /**
     * Reads one message. The header's messageLength is validated (16..[maxMessageSizeBytes])
     * before the body buffer is allocated; a bad length throws
     * [dev.mooring.cmap.internal.wire.WireFormatException] without reading further.
     */
    @Suppress("NOTHING_TO_INLINE") // inline: no frame of its own on the command path
    suspend inline fun readMessage(maxMessageSizeBytes: Int): RawMessage {
        val headerBytes = ByteArray(MessageHeader.HEADER_LENGTH)
        readFully(headerBytes)
        val header = MessageHeader.parse(headerBytes, maxMessageSizeBytes)
        val body = ByteArray(header.bodyLength)
        readFully(body)
        return RawMessage(header, headerBytes, body)
    }

    /** The socket's job: complete once Ktor has fully closed the socket (its coroutines stopped). */
    val job: kotlinx.coroutines.Job get() = socket.socketContext

    fun close() {
        try {
            socket.close()
        } catch (_: Exception) {
            // closing a broken socket may throw; it is closed either way
        }
    }
}
