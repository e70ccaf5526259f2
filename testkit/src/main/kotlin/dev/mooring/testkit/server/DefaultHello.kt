package dev.mooring.testkit.server

import org.bson.BsonBoolean
import org.bson.BsonDateTime
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonInt64

/** The built-in standalone hello reply. Pure; thread-safe. */
object DefaultHello {
    /**
     * A standalone server: `isWritablePrimary` (or `ismaster` for the legacy hello) true,
     * wire versions 0..[WireServer.maxWireVersion] (21 unless set), the default size limits, `helloOk: true` when asked for, the
     * connection number as `connectionId`, no topologyVersion.
     */
    fun standalone(ctx: RequestContext, request: BsonDocument): BsonDocument {
        val legacy = ctx.commandName != "hello"
        val d = BsonDocument()
        if (legacy) d["ismaster"] = BsonBoolean.TRUE else d["isWritablePrimary"] = BsonBoolean.TRUE
        if (legacy && request["helloOk"]?.let { it.isBoolean && it.asBoolean().value } == true) d["helloOk"] = BsonBoolean.TRUE
        d["maxBsonObjectSize"] = BsonInt32(16 * 1024 * 1024)
        d["maxMessageSizeBytes"] = BsonInt32(48_000_000)
        d["maxWriteBatchSize"] = BsonInt32(100_000)
        d["localTime"] = BsonDateTime(System.currentTimeMillis())
        d["logicalSessionTimeoutMinutes"] = BsonInt32(30)
        d["connectionId"] = BsonInt64(ctx.connectionNumber.toLong())
        d["minWireVersion"] = BsonInt32(0)
        d["maxWireVersion"] = BsonInt32(ctx.server.maxWireVersion)
        d["readOnly"] = BsonBoolean.FALSE
        d["ok"] = BsonInt32(1)
        return d
    }
}
