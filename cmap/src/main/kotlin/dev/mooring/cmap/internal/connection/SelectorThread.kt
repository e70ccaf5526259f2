package dev.mooring.cmap.internal.connection

import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.asCoroutineDispatcher
import java.util.concurrent.ExecutorService
import java.util.concurrent.Executors
import java.util.concurrent.atomic.AtomicInteger

/**
 * The daemon thread a connection factory's Ktor selector loop runs on (`mooring-selector-N`).
 * The loop blocks in `Selector.select()`, so it must not sit on `Dispatchers.Default`; on
 * `Dispatchers.IO` it would enlarge the coroutine scheduler both share. [shutdown] lets tasks
 * already queued run and then ends the thread; a task dispatched after it is rejected, which
 * kotlinx.coroutines turns into cancellation of that task's job. Thread-safe.
 */
internal class SelectorThread private constructor(private val executor: ExecutorService) {
    val dispatcher: CoroutineDispatcher = executor.asCoroutineDispatcher()

    fun shutdown() {
        executor.shutdown()
    }

    companion object {
        private val ids = AtomicInteger()

        fun start(): SelectorThread = SelectorThread(
            Executors.newSingleThreadExecutor { r ->
                Thread(r, "mooring-selector-${ids.incrementAndGet()}").apply { isDaemon = true }
            },
        )
    }
}
