package dev.mooring.testkit.server

import io.ktor.utils.io.ByteReadChannel
import io.ktor.utils.io.ByteWriteChannel
import io.ktor.utils.io.readFully
import io.ktor.utils.io.writeFully

/** The bytes of one server-side connection, plain or TLS. Not thread-safe (one reader, one writer, never at once). */
internal class ServerStream(private val input: ByteReadChannel, private val output: ByteWriteChannel, private val tls: ServerTlsSession?) {
    /** Fills [dst] from [offset] to its end. */
    suspend fun readFully(dst: ByteArray, offset: Int = 0) {
        if (tls != null) tls.readFully(dst, offset) else input.readFully(dst, offset, dst.size)
    }

    suspend fun write(bytes: ByteArray) {
        if (tls != null) {
            tls.write(bytes)
        } else {
            output.writeFully(bytes, 0, bytes.size)
            output.flush()
        }
    }

    /** Suspends until the client sends more bytes; false when it closed the connection. */
    suspend fun awaitClientBytes(): Boolean = (tls?.hasBufferedData == true) || input.awaitContent(1)
}
