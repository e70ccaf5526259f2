package dev.mooring.testkit.server

import io.ktor.utils.io.ByteReadChannel
import io.ktor.utils.io.ByteWriteChannel
import io.ktor.utils.io.readAvailable
import io.ktor.utils.io.writeFully
import java.io.EOFException
import java.nio.ByteBuffer
import javax.net.ssl.SSLEngine
import javax.net.ssl.SSLEngineResult.HandshakeStatus
import javax.net.ssl.SSLEngineResult.Status

/**
 * The server end of one TLS connection: the JDK's [SSLEngine] (server mode, from
 * [ServerTlsConfig]) over a connection's byte channels, independent of the client's TLS code.
 * Not thread-safe: one reader and one writer, never at the same time (the [WireServer] reads a
 * request, then writes its reply). Failures (handshake, bad records, the peer closing) are thrown
 * as the engine's `SSLException`s or [EOFException].
 */
internal class ServerTlsSession(private val engine: SSLEngine, private val input: ByteReadChannel, private val output: ByteWriteChannel) {
    /** Records read from the network, not yet unwrapped (write mode). */
    private var netIn: ByteBuffer = ByteBuffer.allocate(engine.session.packetBufferSize)

    /** Plaintext unwrapped, not yet handed to [readFully] (write mode). */
    private var appIn: ByteBuffer = ByteBuffer.allocate(engine.session.applicationBufferSize)

    /** Whether bytes from the client are already buffered here (so waiting on the channel would miss them). */
    val hasBufferedData: Boolean get() = appIn.position() > 0 || netIn.position() > 0

    /** Runs the server side of the handshake to its end. */
    suspend fun handshake() {
        engine.beginHandshake()
        continueHandshake()
    }

    /** Fills [dst] from [offset] to its end with plaintext. */
    suspend fun readFully(dst: ByteArray, offset: Int = 0) {
        var n = offset
        while (n < dst.size) {
            if (appIn.position() > 0) {
                appIn.flip()
                val k = minOf(appIn.remaining(), dst.size - n)
                appIn.get(dst, n, k)
                appIn.compact()
                n += k
            } else {
                unwrapRecord()
                continueHandshake() // a post-handshake message (e.g. a TLS 1.3 key update) may need an answer
            }
        }
    }

    /** Encrypts and sends [bytes], then flushes. */
    suspend fun write(bytes: ByteArray) {
        val src = ByteBuffer.wrap(bytes)
        do wrapAndSend(src) while (src.hasRemaining())
        output.flush()
    }

    private suspend fun continueHandshake() {
        while (true) {
            when (engine.handshakeStatus) {
                HandshakeStatus.NEED_TASK -> while (true) (engine.delegatedTask ?: break).run()
                HandshakeStatus.NEED_WRAP -> {
                    wrapAndSend(EMPTY)
                    output.flush()
                }
                HandshakeStatus.NEED_UNWRAP, HandshakeStatus.NEED_UNWRAP_AGAIN -> unwrapRecord()
                HandshakeStatus.FINISHED, HandshakeStatus.NOT_HANDSHAKING, null -> return
            }
        }
    }

    /** Unwraps one record from [netIn] into [appIn], reading from the network as long as a record is incomplete. */
    private suspend fun unwrapRecord() {
        while (true) {
            netIn.flip()
            val result = try {
                engine.unwrap(netIn, appIn)
            } finally {
                netIn.compact()
            }
            when (result.status) {
                Status.OK -> return
                Status.BUFFER_OVERFLOW -> appIn = grown(appIn, engine.session.applicationBufferSize)
                Status.BUFFER_UNDERFLOW -> {
                    if (netIn.remaining() < engine.session.packetBufferSize) netIn = grown(netIn, engine.session.packetBufferSize)
                    if (input.readAvailable(netIn) < 0) throw EOFException("the client closed the connection")
                }
                Status.CLOSED, null -> throw EOFException("the client closed the TLS session")
            }
        }
    }

    private suspend fun wrapAndSend(src: ByteBuffer) {
        var netOut = ByteBuffer.allocate(engine.session.packetBufferSize)
        while (true) {
            val result = engine.wrap(src, netOut)
            when (result.status) {
                Status.OK -> break
                Status.BUFFER_OVERFLOW -> netOut = grown(netOut, engine.session.packetBufferSize)
                Status.CLOSED, Status.BUFFER_UNDERFLOW, null -> throw EOFException("the TLS session is closed")
            }
        }
        netOut.flip()
        if (netOut.hasRemaining()) output.writeFully(netOut)
    }

    private fun grown(buffer: ByteBuffer, extra: Int): ByteBuffer {
        val bigger = ByteBuffer.allocate(buffer.capacity() + extra)
        buffer.flip()
        bigger.put(buffer)
        return bigger
    }

    private companion object {
        val EMPTY: ByteBuffer = ByteBuffer.allocate(0)
    }
}
