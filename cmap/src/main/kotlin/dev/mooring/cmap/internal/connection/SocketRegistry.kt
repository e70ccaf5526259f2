package dev.mooring.cmap.internal.connection

import kotlinx.coroutines.Job
import kotlinx.coroutines.withTimeoutOrNull
import java.util.concurrent.ConcurrentHashMap

/**
 * The socket jobs of one connection factory that have not finished. Closing a Ktor socket is
 * asynchronous (its reader, writer and close coroutines stop a moment later); the factory's
 * close waits here so that no coroutine and no descriptor outlives it. Thread-safe.
 */
internal class SocketRegistry {
    private val jobs = ConcurrentHashMap.newKeySet<Job>()

    /** Tracks [job] until it completes. */
    fun register(job: Job) {
        jobs += job
        job.invokeOnCompletion { jobs -= job }
    }

    /** Sockets not yet fully closed. */
    val size: Int get() = jobs.size

    /**
     * Waits up to [timeoutMillis] for every tracked socket job to finish; sockets still running
     * then are cancelled and awaited (a write stuck on a dead peer must not keep them alive).
     */
    suspend fun awaitAll(timeoutMillis: Long) {
        val done = withTimeoutOrNull(timeoutMillis) { snapshot().forEach { it.join() } }
        if (done == null) snapshot().forEach { it.cancel() }
        withTimeoutOrNull(timeoutMillis) { snapshot().forEach { it.join() } }
    }

    // Not jobs.toList(): it sizes the list first and then iterates, and throws
    // NoSuchElementException when a job completes (and leaves the set) in between.
    private fun snapshot(): List<Job> = jobs.toTypedArray().asList()
}
