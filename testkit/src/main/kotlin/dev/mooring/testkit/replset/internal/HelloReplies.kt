package dev.mooring.testkit.replset.internal

import dev.mooring.testkit.replset.MemberState
import dev.mooring.testkit.server.WireServer
import org.bson.BsonArray
import org.bson.BsonBoolean
import org.bson.BsonDateTime
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonInt64
import org.bson.BsonObjectId
import org.bson.BsonString

/** Builds hello / legacy hello replies and state-change errors the way mongod 6.0+ does. Pure. */
internal object HelloReplies {
    /**
     * The reply to `hello` ([legacy] false: `isWritablePrimary`) or `isMaster` ([legacy] true:
     * `ismaster`). [helloOk] echoes `helloOk: true` when the request asked for it.
     */
    fun build(s: HelloSnapshot, legacy: Boolean, helloOk: Boolean, connectionId: Long): BsonDocument {
        if (s.shuttingDown) return shutdownInProgress(s)
        val d = BsonDocument()
        d["topologyVersion"] = s.topologyVersion.toBson()
        val primaryKey = if (legacy) "ismaster" else "isWritablePrimary"
        if (s.state == MemberState.REMOVED) {
            d[primaryKey] = BsonBoolean.FALSE
            d["secondary"] = BsonBoolean.FALSE
            d["info"] = BsonString("Does not have a valid replica set config")
            d["isreplicaset"] = BsonBoolean.TRUE
        } else {
            val cfg = s.config
            d["hosts"] = strings(cfg.hosts)
            if (cfg.passives.isNotEmpty()) d["passives"] = strings(cfg.passives)
            if (cfg.arbiters.isNotEmpty()) d["arbiters"] = strings(cfg.arbiters)
            d["setName"] = BsonString(cfg.setName)
            d["setVersion"] = BsonInt32(cfg.version)
            d[primaryKey] = BsonBoolean.valueOf(s.state == MemberState.PRIMARY)
            d["secondary"] = BsonBoolean.valueOf(s.state == MemberState.SECONDARY)
            s.primaryHost?.let { d["primary"] = BsonString(it) }
            val self = s.self!!
            if (self.arbiterOnly) d["arbiterOnly"] = BsonBoolean.TRUE
            if (!self.arbiterOnly && self.priority == 0.0) d["passive"] = BsonBoolean.TRUE
            if (self.hidden) d["hidden"] = BsonBoolean.TRUE
            if (self.tags.isNotEmpty()) d["tags"] = BsonDocument().also { t -> self.tags.forEach { (k, v) -> t[k] = BsonString(v) } }
            d["me"] = BsonString(s.host)
            if (s.state == MemberState.PRIMARY && s.electionId != null) d["electionId"] = BsonObjectId(s.electionId)
            if (!self.arbiterOnly) d["lastWrite"] = s.lastWrite.toBson()
        }
        d["maxBsonObjectSize"] = BsonInt32(16 * 1024 * 1024)
        d["maxMessageSizeBytes"] = BsonInt32(48_000_000)
        d["maxWriteBatchSize"] = BsonInt32(100_000)
        d["localTime"] = BsonDateTime(System.currentTimeMillis())
        d["logicalSessionTimeoutMinutes"] = BsonInt32(30)
        d["connectionId"] = BsonInt64(connectionId)
        d["minWireVersion"] = BsonInt32(s.minWireVersion)
        d["maxWireVersion"] = BsonInt32(s.maxWireVersion)
        d["readOnly"] = BsonBoolean.FALSE
        if (helloOk) d["helloOk"] = BsonBoolean.TRUE
        d["ok"] = BsonInt32(1)
        return d
    }

    /** `ShutdownInProgress` (91), with the member's topologyVersion, as during mongod's quiesce mode. */
    fun shutdownInProgress(s: HelloSnapshot): BsonDocument =
        stateError(s, 91, "ShutdownInProgress", "The server is in quiesce mode and will shut down")

    /** `NotWritablePrimary` (10107), as mongod answers a write on a non-primary. */
    fun notWritablePrimary(s: HelloSnapshot, msg: String = "not primary"): BsonDocument =
        stateError(s, 10107, "NotWritablePrimary", msg)

    /** `NotPrimaryNoSecondaryOk` (13435): a read on a secondary without secondaryOk. */
    fun notPrimaryNoSecondaryOk(s: HelloSnapshot): BsonDocument =
        stateError(s, 13435, "NotPrimaryNoSecondaryOk", "not primary and secondaryOk=false")

    /** `NotPrimaryOrSecondary` (13436): a read on a member that is neither. */
    fun notPrimaryOrSecondary(s: HelloSnapshot): BsonDocument =
        stateError(s, 13436, "NotPrimaryOrSecondary", "node is not in primary or recovering state")

    private fun stateError(s: HelloSnapshot, code: Int, name: String, msg: String): BsonDocument =
        WireServer.error(code, name, msg).append("topologyVersion", s.topologyVersion.toBson())

    private fun strings(list: List<String>) = BsonArray(list.map { BsonString(it) })
}
