package dev.mooring.cmap.internal.connection

/**
 * Test hook: what an [EventLoop] tells about its turns, so a test can observe that a reply was
 * resumed by the loop itself (no task) or that a loop does not spin (few selects). Production
 * loops have none; then each turn costs a null check and nothing is counted.
 *
 * Called on the loop's own thread; the loops of one group call the same probe concurrently.
 */
internal interface EventLoopProbe {
    /** The loop ran one task of its queue. */
    fun taskRun()

    /** The loop's select returned (ready sockets, a wake-up, or a `selectNow`). */
    fun selectReturned()
}
