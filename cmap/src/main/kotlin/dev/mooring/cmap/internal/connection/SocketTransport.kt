package dev.mooring.cmap.internal.connection

import dev.mooring.cmap.internal.connection.tls.TlsChannel
import dev.mooring.cmap.internal.wire.MessageHeader
import io.ktor.network.sockets.Socket
import io.ktor.network.sockets.openReadChannel
import io.ktor.network.sockets.openWriteChannel
import io.ktor.utils.io.readFully
import io.ktor.utils.io.writeFully
import javax.net.ssl.SSLEngine

/** A message as read from the socket: its validated header, the header bytes and the body. */
internal class RawMessage(val header: MessageHeader, val headerBytes: ByteArray, val body: ByteArray)

/**
 * Byte transport over one connected Ktor socket, in plain text or, with an [SSLEngine], TLS
 * (see [TlsChannel]; call [startTls] before anything else). Not thread-safe: the owning
 * connection's single-track rule guarantees one reader and one writer at a time. [close] is
 * idempotent and does not suspend.
 */
internal class SocketTransport(private val socket: Socket, engine: SSLEngine? = null) {
    private val input = socket.openReadChannel()
    private val output = socket.openWriteChannel(autoFlush = false)
    private val tls: TlsChannel? = engine?.let { TlsChannel(it, input, output) }

    /** Runs the TLS handshake (no-op in plain text). */
    suspend fun startTls() {
        tls?.handshake()
    }

    suspend fun write(bytes: ByteArray) {
        if (tls != null) {
            tls.write(bytes)
        } else {
            output.writeFully(bytes, 0, bytes.size)
            output.flush()
        }
    }

    private suspend fun readFully(dst: ByteArray) {
        if (tls != null) tls.readFully(dst, 0, dst.size) else input.readFully(dst, 0, dst.size)
    }

    /**
     * Reads one message. The header's messageLength is validated (16..[maxMessageSizeBytes])
     * before the body buffer is allocated; a bad length throws
     * [dev.mooring.cmap.internal.wire.WireFormatException] without reading further.
     */
    suspend fun readMessage(maxMessageSizeBytes: Int): RawMessage {
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
