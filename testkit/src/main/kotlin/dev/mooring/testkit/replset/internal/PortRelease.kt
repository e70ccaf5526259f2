package dev.mooring.testkit.replset.internal

import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.delay
import kotlinx.coroutines.withContext
import java.net.ConnectException
import java.net.InetSocketAddress
import java.net.Socket

/**
 * Waits until nothing listens on a loopback port any more. Ktor closes a listening channel that is
 * registered with its selector lazily (the file descriptor goes when the selector deregisters it),
 * so right after `WireServer.close()` a connect may still succeed for a short while; a killed
 * member must refuse connections when `kill` returns. Stateless; thread-safe.
 */
internal object PortRelease {
    private const val ATTEMPTS = 500
    private const val PAUSE_MS = 10L

    /** Suspends (on [Dispatchers.IO]) until 127.0.0.1:[port] refuses; false if it still accepts after ~5 s. */
    suspend fun await(port: Int): Boolean = withContext(Dispatchers.IO) {
        repeat(ATTEMPTS) {
            if (refuses(port)) return@withContext true
            delay(PAUSE_MS)
        }
        false
    }

    /** Blocking variant of [await], for `close()`. */
    fun awaitBlocking(port: Int): Boolean {
        repeat(ATTEMPTS) {
            if (refuses(port)) return true
            Thread.sleep(PAUSE_MS)
        }
        return false
    }

    private fun refuses(port: Int): Boolean = try {
        Socket().use { it.connect(InetSocketAddress("127.0.0.1", port), 1_000) }
        false
    } catch (_: ConnectException) {
        true
    } catch (_: java.io.IOException) {
        false
    }
}
