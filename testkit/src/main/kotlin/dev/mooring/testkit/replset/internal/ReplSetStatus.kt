package dev.mooring.testkit.replset.internal

import dev.mooring.testkit.replset.LastWrite
import dev.mooring.testkit.replset.MemberState
import org.bson.BsonArray
import org.bson.BsonBoolean
import org.bson.BsonDateTime
import org.bson.BsonDocument
import org.bson.BsonDouble
import org.bson.BsonInt32
import org.bson.BsonInt64
import org.bson.BsonString

/** One row of `replSetGetStatus.members`, taken under the simulator's lock. Immutable. */
internal class StatusRow(val id: Int, val host: String, val state: MemberState, val healthy: Boolean, val lastWrite: LastWrite, val self: Boolean)

/** Builds `replSetGetStatus` replies in mongod's shape (the fields drivers and tests look at). Pure. */
internal object ReplSetStatus {
    fun build(setName: String, term: Long, myState: MemberState, rows: List<StatusRow>): BsonDocument {
        val members = BsonArray(rows.map { r ->
            val state = if (r.healthy) r.state else null
            val d = BsonDocument("_id", BsonInt32(r.id))
                .append("name", BsonString(r.host))
                .append("health", BsonDouble(if (r.healthy) 1.0 else 0.0))
                .append("state", BsonInt32(state?.let(::code) ?: 8))
                .append("stateStr", BsonString(state?.name ?: "(not reachable/healthy)"))
            if (r.healthy && r.state != MemberState.ARBITER) {
                d["optime"] = BsonDocument("ts", r.lastWrite.opTime).append("t", BsonInt64(r.lastWrite.term))
                d["optimeDate"] = BsonDateTime(r.lastWrite.lastWriteDateMillis)
            }
            if (r.self) d["self"] = BsonBoolean.TRUE
            d
        })
        return BsonDocument("set", BsonString(setName))
            .append("date", BsonDateTime(System.currentTimeMillis()))
            .append("myState", BsonInt32(code(myState)))
            .append("term", BsonInt64(term))
            .append("members", members)
            .append("ok", BsonInt32(1))
    }

    /** The numeric member states of mongod. */
    fun code(state: MemberState): Int = when (state) {
        MemberState.PRIMARY -> 1
        MemberState.SECONDARY -> 2
        MemberState.RECOVERING -> 3
        MemberState.ARBITER -> 7
        MemberState.REMOVED -> 10
    }
}
