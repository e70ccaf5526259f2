package dev.mooring.testkit.replset

import org.bson.BsonDocument
import org.bson.BsonInt64
import org.bson.BsonObjectId
import org.bson.types.ObjectId

/**
 * A member's `topologyVersion` as mongod reports it: [processId] changes on every (re)start,
 * [counter] increments on every change of the member's topology-relevant state. Immutable.
 */
data class TopologyVersion(val processId: ObjectId, val counter: Long) {
    /** `{processId: ObjectId, counter: Long}`. */
    fun toBson(): BsonDocument = BsonDocument("processId", BsonObjectId(processId)).append("counter", BsonInt64(counter))

    /** The next version of the same process. */
    fun next(): TopologyVersion = copy(counter = counter + 1)

    companion object {
        /** A fresh process: new processId, counter 0. */
        fun fresh(): TopologyVersion = TopologyVersion(ObjectId(), 0)

        /**
         * Parses a `topologyVersion` document from a request. Throws [IllegalArgumentException]
         * when it is not `{processId: ObjectId, counter: integer}`.
         */
        fun parse(doc: BsonDocument): TopologyVersion {
            val pid = doc["processId"]
            require(pid != null && pid.isObjectId) { "topologyVersion.processId must be an ObjectId" }
            val counter = doc["counter"]
            require(counter != null && (counter.isInt64 || counter.isInt32)) { "topologyVersion.counter must be an integer" }
            return TopologyVersion(pid.asObjectId().value, counter.asNumber().longValue())
        }
    }
}
