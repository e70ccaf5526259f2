package dev.mooring.sdam.internal.session

import org.bson.BsonDocument
import org.bson.BsonTimestamp
import java.util.concurrent.atomic.AtomicReference

/**
 * Internal API, not stable: an explicit session's clocks, observed from every reply to its
 * operations ([observed]): its cluster time (the [ClusterClock] it extends), its `operationTime`
 * (causal-consistency.md: the highest one seen), its snapshot time (driver-sessions.md
 * "Snapshot reads": the `atClusterTime` of the first reply that reports one, kept from then on)
 * when [snapshot], and the sharded transaction's `recoveryToken` handed to [transaction].
 * Thread-safe and lock-free.
 */
internal class SessionClock(private val snapshot: Boolean, private val transaction: Transaction) : ClusterClock() {
    private val operation = AtomicReference<BsonTimestamp?>(null)
    private val snapshotAt = AtomicReference<BsonTimestamp?>(null)

    /** The highest `operationTime` seen (or given to [advanceOperationTime]), or null. */
    val operationTime: BsonTimestamp? get() = operation.get()

    /** The snapshot session's `atClusterTime`, or null before its first read's reply (or when not a snapshot session). */
    val snapshotTime: BsonTimestamp? get() = snapshotAt.get()

    /** Advances [operationTime] to [time] when it is higher (compared unsigned, seconds then increment). */
    fun advanceOperationTime(time: BsonTimestamp) {
        while (true) {
            val now = operation.get()
            if (now != null && java.lang.Long.compareUnsigned(time.value, now.value) <= 0) return
            if (operation.compareAndSet(now, time)) return
        }
    }

    override fun observed(reply: BsonDocument) {
        (reply["operationTime"] as? BsonTimestamp)?.let { advanceOperationTime(it) }
        if (snapshot && snapshotAt.get() == null) {
            val at = (reply["cursor"] as? BsonDocument)?.get("atClusterTime") ?: reply["atClusterTime"]
            if (at is BsonTimestamp) snapshotAt.compareAndSet(null, at)
        }
        (reply["recoveryToken"] as? BsonDocument)?.let { transaction.recoveryToken = it }
    }
}
