package dev.mooring.cmap.internal.connection

/**
 * A connection whose socket belongs to one [EventLoop] (its home): whoever waits for the socket is
 * registered with that loop's selector and resumed on its thread. The pool uses it to resume a
 * served checkout on the loop of the connection it was handed (see
 * [dev.mooring.cmap.internal.pool.ServedWaiters]), so the checkout's request is written, and its
 * reply waited for, without a cross-thread registration.
 */
internal interface LoopBound {
    /** The home loop, or null before the socket is connected, after it is closed, or when its selector is not an [EventLoopGroup]. */
    val homeLoop: EventLoop?
}
