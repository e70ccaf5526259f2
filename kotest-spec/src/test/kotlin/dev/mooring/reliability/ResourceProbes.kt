package dev.mooring.reliability

import kotlinx.coroutines.debug.DebugProbes
import kotlinx.coroutines.delay
import kotlinx.coroutines.withTimeoutOrNull
import java.io.File
import kotlin.time.Duration
import kotlin.time.Duration.Companion.seconds

/** Open file descriptors of this JVM (entries of /proc/self/fd); -1 where /proc is absent. */
fun openFileDescriptors(): Int = File("/proc/self/fd").list()?.size ?: -1

/** Open socket descriptors of this JVM (`socket:[inode]` entries of /proc/self/fd); -1 where /proc is absent. */
fun openSocketDescriptors(): Int =
    File("/proc/self/fd").listFiles()?.count { f -> runCatching { java.nio.file.Files.readSymbolicLink(f.toPath()).toString() }.getOrDefault("").startsWith("socket:") } ?: -1

/** Waits (bounded) until at most [limit] socket descriptors are open; returns the last count seen. */
suspend fun awaitSocketDescriptorsAtMost(limit: Int, bound: Duration = 15.seconds): Int {
    var last = openSocketDescriptors()
    if (limit < 0) return last
    withTimeoutOrNull(bound) {
        while (true) {
            last = openSocketDescriptors()
            if (last <= limit) break
            delay(50)
        }
    }
    return last
}

/**
 * Waits (bounded) until the descriptor count is at most [limit]: sockets closed by the client
 * are released by the peers' threads a moment later. Returns the last count seen.
 */
suspend fun awaitFileDescriptorsAtMost(limit: Int, bound: Duration = 15.seconds): Int {
    if (limit < 0) return openFileDescriptors()
    var last = openFileDescriptors()
    withTimeoutOrNull(bound) {
        while (true) {
            last = openFileDescriptors()
            if (last <= limit) break
            delay(50)
        }
    }
    return last
}

/**
 * Coroutines alive now that library code created (the first `dev.mooring.` frame of their
 * creation stack is in cmap, sdam or events, not in a test or the test kit). Needs
 * [DebugProbes] installed with creation stack traces.
 */
fun libraryCoroutines(): List<String> {
    if (!DebugProbes.isInstalled) return emptyList()
    return DebugProbes.dumpCoroutinesInfo().filter { info ->
        val owner = info.creationStackTrace.firstOrNull { it.className.startsWith("dev.mooring.") }?.className ?: return@filter false
        LIBRARY_PACKAGES.any { owner.startsWith(it) }
    }.map { info ->
        val site = info.creationStackTrace.firstOrNull { it.className.startsWith("dev.mooring.") }
        "${info.state} ${info.context} created at $site"
    }
}

/** Waits (bounded) until no library coroutine is alive; returns those still alive then. */
suspend fun awaitNoLibraryCoroutines(bound: Duration = 10.seconds): List<String> {
    var last = libraryCoroutines()
    withTimeoutOrNull(bound) {
        while (last.isNotEmpty()) {
            delay(50)
            last = libraryCoroutines()
        }
    }
    return last
}

private val LIBRARY_PACKAGES = listOf("dev.mooring.sdam.", "dev.mooring.cmap.", "dev.mooring.events.")

/** The descriptors open now, as `fd -> target` (sockets as `socket:[inode]`), for diagnostics. */
fun fileDescriptorTargets(): Map<String, String> =
    File("/proc/self/fd").listFiles()?.associate { f -> f.name to (runCatching { java.nio.file.Files.readSymbolicLink(f.toPath()).toString() }.getOrDefault("?")) } ?: emptyMap()

/** The TCP endpoints (`local -> remote`, hex as in /proc/net/tcp) of socket inodes, for diagnostics. */
fun tcpEndpoints(inodes: Set<String>): List<String> =
    listOf("/proc/net/tcp", "/proc/net/tcp6").flatMap { path ->
        runCatching { File(path).readLines().drop(1) }.getOrDefault(emptyList()).mapNotNull { line ->
            val cols = line.trim().split(Regex("\\s+"))
            if (cols.size > 9 && cols[9] in inodes) "${cols[1]} -> ${cols[2]} state ${cols[3]}" else null
        }
    }
