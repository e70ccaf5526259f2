package dev.mooring.driver.internal

import dev.mooring.sdam.MongoOperationTimeoutException

/**
 * One timeoutMS for an operation made of several cluster calls (a bulk write's batches, the
 * limits lookup before them): client-side-operations-timeout.md bounds the whole operation, so
 * each call gets what is left. Created when the operation starts; confined to its coroutine.
 */
internal class MultiCommandDeadline(
    /** The effective timeoutMS: the operation's, database's or collection's, else the cluster's; null or 0: none. */
    private val timeoutMS: Long?,
) {
    constructor(defaults: Defaults) : this(defaults.timeoutMS ?: defaults.cluster.settings.timeoutMS)

    private val start = System.nanoTime()

    /**
     * The timeoutMS for the next call: null or 0 as configured when there is no limit, else the
     * milliseconds left (at least 1); [MongoOperationTimeoutException] when none are left.
     */
    fun next(): Long? {
        val t = timeoutMS ?: return null
        if (t == 0L) return 0
        val left = t - (System.nanoTime() - start) / 1_000_000
        if (left <= 0) throw MongoOperationTimeoutException("timeoutMS $t expired between the commands of one operation")
        return left
    }
}
