package dev.mooring.testkit.replset

import org.bson.BsonDateTime
import org.bson.BsonDocument
import org.bson.BsonInt64
import org.bson.BsonTimestamp

/**
 * A member's last applied write, reported in hello as `lastWrite` (max staleness uses
 * [lastWriteDateMillis]). Immutable.
 *
 * @property opTime the oplog timestamp of the write.
 * @property term the election term the write was made in.
 * @property lastWriteDateMillis wall-clock time of the write, epoch milliseconds.
 */
data class LastWrite(val opTime: BsonTimestamp, val term: Long, val lastWriteDateMillis: Long) {
    /** `{opTime: {ts, t}, lastWriteDate, majorityOpTime: {ts, t}, majorityWriteDate}` as mongod sends it. */
    fun toBson(): BsonDocument {
        val op = BsonDocument("ts", opTime).append("t", BsonInt64(term))
        return BsonDocument("opTime", op)
            .append("lastWriteDate", BsonDateTime(lastWriteDateMillis))
            .append("majorityOpTime", op.clone())
            .append("majorityWriteDate", BsonDateTime(lastWriteDateMillis))
    }

    companion object {
        /** A write at [millis] (seconds part as the timestamp's time, [increment] as its counter) in [term]. */
        fun at(millis: Long, term: Long, increment: Int = 1): LastWrite =
            LastWrite(BsonTimestamp((millis / 1000).toInt(), increment), term, millis)
    }
}
