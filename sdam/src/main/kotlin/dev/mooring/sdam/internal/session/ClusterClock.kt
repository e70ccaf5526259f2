package dev.mooring.sdam.internal.session

import org.bson.BsonDocument
import org.bson.BsonTimestamp
import org.bson.BsonValue
import java.util.concurrent.atomic.AtomicReference

/**
 * Internal API, not stable: the highest cluster time seen (driver-sessions.md "Gossipping the
 * cluster time"), a `$clusterTime` document `{clusterTime: Timestamp, signature: {...}}` kept in
 * the format it was received in. Cluster times are compared by their `clusterTime` timestamp
 * only (its seconds and increment, unsigned); the signature takes no part. One clock belongs to a
 * cluster (advanced only with cluster times received from servers), one to each explicit
 * session. Thread-safe and lock-free.
 */
internal open class ClusterClock {
    private val highest = AtomicReference<BsonDocument?>(null)

    /** The highest cluster time seen, or null before the first one. Do not modify. */
    val current: BsonDocument? get() = highest.get()

    /**
     * Advances to [clusterTime] when it is a cluster time (a document with a `clusterTime`
     * timestamp) higher than the current one; anything else leaves the clock as it is. Returns
     * true when the clock advanced.
     */
    fun advance(clusterTime: BsonValue?): Boolean {
        val candidate = clusterTime?.takeIf { timestampOf(it) != null }?.asDocument() ?: return false
        while (true) {
            val now = highest.get()
            if (higher(now, candidate) !== candidate) return false
            if (highest.compareAndSet(now, candidate)) return true
        }
    }

    /**
     * Called with every reply (an `ok: 0` one too) to an operation that gossips with this clock,
     * before its `$clusterTime` is taken; nothing for the cluster's clock. An explicit session's
     * clock ([SessionClock]) records its operation time, snapshot time and recovery token here.
     */
    open fun observed(reply: BsonDocument) {}

    companion object {
        /** The `clusterTime` timestamp of the cluster time [value], or null when [value] is no cluster time. */
        fun timestampOf(value: BsonValue?): BsonTimestamp? =
            (value as? BsonDocument)?.get("clusterTime")?.takeIf { it.isTimestamp }?.asTimestamp()

        /** The higher of two cluster times ([a] on a tie); either may be null. */
        fun higher(a: BsonDocument?, b: BsonDocument?): BsonDocument? {
            val ta = timestampOf(a) ?: return b
            val tb = timestampOf(b) ?: return a
            return if (java.lang.Long.compareUnsigned(tb.value, ta.value) > 0) b else a
        }
    }
}
