package dev.mooring.sdam

import dev.mooring.events.MooringException
import org.bson.BsonDocument
import org.bson.BsonInt64
import org.bson.BsonObjectId
import org.bson.types.ObjectId

/**
 * The `topologyVersion` a server (4.4+) reports in hello replies and state change errors:
 * the server process and a counter that grows with every state change. Immutable value.
 */
public data class TopologyVersion(
    /** Identifies the server process; a restart produces a new one. */
    val processId: ObjectId,
    /** Grows with every topology change inside one process. */
    val counter: Long,
) {
    /** The BSON form `{processId: ObjectId, counter: Int64}`. */
    public fun toBsonDocument(): BsonDocument =
        BsonDocument("processId", BsonObjectId(processId)).append("counter", BsonInt64(counter))

    public companion object {
        /**
         * Parses `{processId: ObjectId, counter: <number>}`; throws [InvalidServerReplyException]
         * when either field is missing or of the wrong type.
         */
        @JvmStatic
        public fun fromBson(document: BsonDocument): TopologyVersion {
            val pid = document["processId"]
            val counter = document["counter"]
            if (pid == null || !pid.isObjectId) throw InvalidServerReplyException("topologyVersion.processId must be an ObjectId: $document")
            if (counter == null || !counter.isNumber) throw InvalidServerReplyException("topologyVersion.counter must be a number: $document")
            return TopologyVersion(pid.asObjectId().value, counter.asNumber().longValue())
        }

        /**
         * Compares a server's current topologyVersion with an incoming one by the spec's rule:
         * -1 when [incoming] must be treated as newer (either is null, or the process ids
         * differ, or its counter is greater), 0 when they are equal, 1 when [current] is newer.
         */
        @JvmStatic
        public fun compare(current: TopologyVersion?, incoming: TopologyVersion?): Int {
            if (current == null || incoming == null) return -1
            if (current.processId != incoming.processId) return -1
            return current.counter.compareTo(incoming.counter).coerceIn(-1, 1)
        }
    }
}

/** A server reply that lacks a required field or carries a field of the wrong type. */
public class InvalidServerReplyException(message: String) : MooringException(message)
