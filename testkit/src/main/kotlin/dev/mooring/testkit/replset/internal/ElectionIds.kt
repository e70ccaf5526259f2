package dev.mooring.testkit.replset.internal

import org.bson.types.ObjectId
import java.nio.ByteBuffer

/** electionId values as mongod (protocol version 1) derives them from the term. Pure. */
internal object ElectionIds {
    /**
     * `0x7fffffff` followed by the term as a big-endian 64-bit integer: a later term always gives a
     * greater ObjectId, which is what SDAM's electionId comparison relies on.
     */
    fun forTerm(term: Long): ObjectId {
        require(term >= 0) { "term must not be negative, got $term" }
        val bytes = ByteBuffer.allocate(12).putInt(Int.MAX_VALUE).putLong(term).array()
        return ObjectId(bytes)
    }
}
