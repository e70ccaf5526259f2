package dev.mooring.cmap.internal.connection

import dev.mooring.cmap.internal.wire.MessageHeader
import io.ktor.network.sockets.Socket
import io.ktor.network.sockets.openReadChannel
import io.ktor.network.sockets.openWriteChannel
import io.ktor.utils.io.readFully
import io.ktor.utils.io.writeFully

/** A message as read from the socket: its validated header, the header bytes and the body. */
internal class RawMessage(val header: MessageHeader, val headerBytes: ByteArray, val body: ByteArray)

/**
 * Byte transport over one connected Ktor socket. Not thread-safe: the owning connection's
 * single-track rule guarantees one reader and one writer at a time. [close] is idempotent and
 * does not suspend.
 */
internal class SocketTransport(private val socket: Socket) {
    private val input = socket.openReadChannel()
    private val output = socket.openWriteChannel(autoFlush = false)

    suspend fun write(bytes: ByteArray) {
        output.writeFully(bytes, 0, bytes.size)
        output.flush()
    }

    /**
     * Reads one message. The header's messageLength is validated (16..[maxMessageSizeBytes])
     * before the body buffer is allocated; a bad length throws
     * [dev.mooring.cmap.internal.wire.WireFormatException] without reading further.
     */
    suspend fun readMessage(maxMessageSizeBytes: Int): RawMessage {
        val headerBytes = ByteArray(MessageHeader.HEADER_LENGTH)
        input.readFully(headerBytes, 0, headerBytes.size)
        val header = MessageHeader.parse(headerBytes, maxMessageSizeBytes)
        val body = ByteArray(header.bodyLength)
        input.readFully(body, 0, body.size)
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
