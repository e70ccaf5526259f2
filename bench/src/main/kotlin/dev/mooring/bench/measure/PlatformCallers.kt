package dev.mooring.bench.measure

import java.util.concurrent.atomic.AtomicReference

/**
 * The thread-per-caller shape of the libraries whose callers are platform threads (the sync
 * driver, Mooring's Java facade, the floor, the official pool): [threads] daemon threads named
 * `<name>-<i>`, each running [caller] with its index until it returns (a caller loops while the
 * window is not stopped); the window opens after [warmupMs] and closes [measureMs] later, then
 * the threads are stopped and joined. The first caller failure is rethrown as an
 * [IllegalStateException] naming [name]; with [joinGraceMs], a thread still running that long
 * after the window (a server that stopped answering) fails the cell instead of hanging it.
 */
internal object PlatformCallers {
    fun run(
        window: CallerWindow,
        threads: Int,
        name: String,
        warmupMs: Long,
        measureMs: Long,
        joinGraceMs: Long? = null,
        caller: (Int) -> Unit,
    ) {
        val error = AtomicReference<Throwable>()
        val workers = (0 until threads).map { i ->
            Thread({
                try {
                    caller(i)
                } catch (t: Throwable) {
                    error.compareAndSet(null, t)
                }
            }, "$name-$i").apply { isDaemon = true }
        }
        workers.forEach { it.start() }
        Thread.sleep(warmupMs)
        window.open()
        Thread.sleep(measureMs)
        window.close()
        window.stop = true
        if (joinGraceMs == null) workers.forEach { it.join() } else workers.forEach { it.join(joinGraceMs) }
        error.get()?.let { throw IllegalStateException("a $name thread failed: $it", it) }
        check(workers.none { it.isAlive }) { "a $name thread was still running ${joinGraceMs} ms after the window (the server stopped answering)" }
    }
}
