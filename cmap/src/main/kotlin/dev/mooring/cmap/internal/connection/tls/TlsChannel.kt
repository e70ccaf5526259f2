package dev.mooring.cmap.internal.connection.tls

import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.withContext
import java.io.EOFException
import java.nio.ByteBuffer
import javax.net.ssl.SSLEngine
import javax.net.ssl.SSLEngineResult
import javax.net.ssl.SSLException

/**
 * TLS over a [NetIo] (the connection's socket, read and written directly:
 * [dev.mooring.cmap.internal.connection.DirectSocketIo]), driven by the JDK's [SSLEngine] (any
 * protocol and suite the JDK offers, TLS 1.3 included). Used by Mooring's connections (client
 * mode; the engine's mode decides the role).
 *
 * Concurrency: not thread-safe. [handshake] runs first; afterwards one [write] or one
 * [readFully] at a time (a connection is single-track, so reads and writes never overlap).
 * Cancellation leaves the stream unusable: the owner closes the socket. [SSLException]s
 * propagate unchanged so the caller can classify them (see [TlsErrors]).
 */
internal class TlsChannel internal constructor(
    /** A configured engine; its client/server mode decides the role. */
    internal val engine: SSLEngine,
    private val net: NetIo,
) {
    private var netIn: ByteBuffer = ByteBuffer.allocate(engine.session.packetBufferSize).flip()
    private var appIn: ByteBuffer = ByteBuffer.allocate(engine.session.applicationBufferSize).flip()
    private var netOut: ByteBuffer = ByteBuffer.allocate(engine.session.packetBufferSize)

    /** Runs the TLS handshake to completion. Throws [SSLException] (e.g. an untrusted certificate) or [EOFException]. */
    internal suspend fun handshake() {
        engine.beginHandshake()
        while (true) {
            when (engine.handshakeStatus) {
                SSLEngineResult.HandshakeStatus.NEED_WRAP -> wrap(EMPTY)
                SSLEngineResult.HandshakeStatus.NEED_UNWRAP, SSLEngineResult.HandshakeStatus.NEED_UNWRAP_AGAIN -> unwrap()
                SSLEngineResult.HandshakeStatus.NEED_TASK -> runTasks()
                else -> return
            }
        }
    }

    /** Encrypts and sends [bytes], then flushes. */
    internal suspend fun write(bytes: ByteArray) {
        val src = ByteBuffer.wrap(bytes)
        do {
            wrap(src)
        } while (src.hasRemaining())
    }

    /** Reads exactly [length] decrypted bytes into [dst] at [offset]; [EOFException] when the peer closes first. */
    internal suspend fun readFully(dst: ByteArray, offset: Int = 0, length: Int = dst.size - offset) {
        var at = offset
        val end = offset + length
        while (at < end) {
            if (appIn.hasRemaining()) {
                val n = minOf(appIn.remaining(), end - at)
                appIn.get(dst, at, n)
                at += n
            } else {
                unwrap()
                afterOperation()
            }
        }
    }

    /** True when decrypted bytes are buffered and can be read without touching the network. */
    internal val hasBufferedData: Boolean get() = appIn.hasRemaining()

    private suspend fun afterOperation() {
        while (true) {
            when (engine.handshakeStatus) {
                SSLEngineResult.HandshakeStatus.NEED_TASK -> runTasks()
                SSLEngineResult.HandshakeStatus.NEED_WRAP -> wrap(EMPTY)
                else -> return
            }
        }
    }

    private suspend fun wrap(src: ByteBuffer) {
        while (true) {
            netOut.clear()
            val result = engine.wrap(src, netOut)
            when (result.status) {
                SSLEngineResult.Status.OK -> {
                    netOut.flip()
                    if (netOut.hasRemaining()) net.writeFully(netOut)
                    if (result.handshakeStatus == SSLEngineResult.HandshakeStatus.NEED_TASK) runTasks()
                    return
                }
                SSLEngineResult.Status.BUFFER_OVERFLOW -> netOut = ByteBuffer.allocate(netOut.capacity() * 2)
                SSLEngineResult.Status.CLOSED -> {
                    netOut.flip()
                    if (netOut.hasRemaining()) net.writeFully(netOut)
                    throw SSLException("the TLS session is closed")
                }
                else -> throw SSLException("unexpected TLS wrap status ${result.status}")
            }
        }
    }

    /** Unwraps one TLS record into [appIn], reading from the network as needed. */
    private suspend fun unwrap() {
        while (true) {
            appIn.compact()
            val result = try {
                engine.unwrap(netIn, appIn)
            } finally {
                appIn.flip()
            }
            when (result.status) {
                SSLEngineResult.Status.OK -> {
                    if (result.handshakeStatus == SSLEngineResult.HandshakeStatus.NEED_TASK) runTasks()
                    return
                }
                SSLEngineResult.Status.BUFFER_UNDERFLOW -> readNet()
                SSLEngineResult.Status.BUFFER_OVERFLOW -> {
                    val bigger = ByteBuffer.allocate(appIn.capacity() + engine.session.applicationBufferSize)
                    bigger.put(appIn)
                    appIn = bigger.flip()
                }
                SSLEngineResult.Status.CLOSED -> throw EOFException("the peer closed the TLS session")
                else -> throw SSLException("unexpected TLS unwrap status ${result.status}")
            }
        }
    }

    private suspend fun readNet() {
        netIn.compact()
        if (!netIn.hasRemaining()) {
            val bigger = ByteBuffer.allocate(netIn.capacity() + engine.session.packetBufferSize)
            netIn.flip()
            bigger.put(netIn)
            netIn = bigger
        }
        val n = try {
            net.readAvailable(netIn)
        } finally {
            netIn.flip()
        }
        if (n < 0) throw EOFException("connection closed by the peer during TLS")
    }

    private suspend fun runTasks() {
        withContext(Dispatchers.IO) {
            while (true) {
                val task = engine.delegatedTask ?: break
                task.run()
            }
        }
    }

    private companion object {
        val EMPTY: ByteBuffer = ByteBuffer.allocate(0)
    }
}

/** The network side of a [TlsChannel]: raw bytes in and out. Same concurrency rules as the channel. */
internal interface NetIo {
    /** Reads at least one byte into [dst] (suspending while none is available); -1 at end of stream. */
    suspend fun readAvailable(dst: ByteBuffer): Int

    /** Writes all of [src] and flushes. */
    suspend fun writeFully(src: ByteBuffer)
}
