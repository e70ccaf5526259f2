package dev.mooring.sdam.internal

import dev.mooring.cmap.ConnectionDescription
import dev.mooring.events.MooringException
import dev.mooring.events.ServerAddress
import dev.mooring.sdam.InvalidServerReplyException
import dev.mooring.sdam.ServerDescription
import dev.mooring.sdam.ServerType
import dev.mooring.sdam.TopologyVersion
import org.bson.BsonDocument
import org.bson.BsonValue

/** Turns a hello / legacy hello reply into a [ServerDescription] (SDAM "Parsing a hello response"). Pure. */
internal object HelloParser {
    fun parse(
        address: ServerAddress,
        reply: BsonDocument,
        rtt: Double?,
        minRtt: Double?,
        lastUpdate: Long?,
    ): ServerDescription = try {
        parseOrThrow(address, reply, rtt, minRtt, lastUpdate)
    } catch (e: MooringException) {
        ServerDescription(address = address, error = "invalid hello reply from $address: ${e.message}", cause = e, lastUpdateTimeMillis = lastUpdate)
    }

    private fun parseOrThrow(address: ServerAddress, r: BsonDocument, rtt: Double?, minRtt: Double?, lastUpdate: Long?): ServerDescription {
        val topologyVersion = (r["topologyVersion"] as? BsonDocument)?.let { TopologyVersion.fromBson(it) }
        if (!isTrue(r["ok"])) {
            return ServerDescription(
                address = address,
                error = r.getString("errmsg", null)?.value ?: "hello reply without ok: 1",
                topologyVersion = topologyVersion,
                lastUpdateTimeMillis = lastUpdate,
            )
        }
        val setName = string(r, "setName")
        val writable = if (r.containsKey("isWritablePrimary")) isTrue(r["isWritablePrimary"]) else isTrue(r["ismaster"])
        val type = when {
            isTrue(r["isreplicaset"]) -> ServerType.RS_GHOST
            setName != null -> when {
                isTrue(r["hidden"]) -> ServerType.RS_OTHER
                writable -> ServerType.RS_PRIMARY
                isTrue(r["secondary"]) -> ServerType.RS_SECONDARY
                isTrue(r["arbiterOnly"]) -> ServerType.RS_ARBITER
                else -> ServerType.RS_OTHER
            }
            string(r, "msg") == "isdbgrid" -> ServerType.MONGOS
            else -> ServerType.STANDALONE
        }
        val lastWrite = r["lastWrite"] as? BsonDocument
        return ServerDescription(
            address = address,
            type = type,
            roundTripTimeMillis = rtt,
            minRoundTripTimeMillis = minRtt,
            lastWriteDate = lastWrite?.get("lastWriteDate")?.let { dateMillis(it, "lastWrite.lastWriteDate") },
            opTime = lastWrite?.get("opTime") as? BsonDocument,
            minWireVersion = int(r, "minWireVersion") ?: 0,
            maxWireVersion = int(r, "maxWireVersion") ?: 0,
            me = string(r, "me")?.let(::host),
            hosts = hostSet(r, "hosts"),
            passives = hostSet(r, "passives"),
            arbiters = hostSet(r, "arbiters"),
            tags = tags(r),
            setName = setName,
            electionId = r["electionId"]?.let { if (it.isObjectId) it.asObjectId().value else if (it.isNull) null else bad("electionId", it) },
            setVersion = r["setVersion"]?.let { if (it.isNumber) it.asNumber().longValue() else if (it.isNull) null else bad("setVersion", it) },
            // Some old servers answered `primary: true`; only a host string carries information.
            primary = r["primary"]?.takeIf { it.isString }?.let { host(it.asString().value) },
            lastUpdateTimeMillis = lastUpdate,
            logicalSessionTimeoutMinutes = int(r, "logicalSessionTimeoutMinutes"),
            topologyVersion = topologyVersion,
            iscryptd = r["iscryptd"]?.let { isTrue(it) },
            serviceId = r["serviceId"]?.let { if (it.isObjectId) it.asObjectId().value else null },
            helloOk = isTrue(r["helloOk"]),
            maxBsonObjectSize = positiveInt(r, "maxBsonObjectSize") ?: ConnectionDescription.DEFAULT_MAX_BSON_OBJECT_SIZE,
            maxMessageSizeBytes = positiveInt(r, "maxMessageSizeBytes") ?: ConnectionDescription.DEFAULT_MAX_MESSAGE_SIZE_BYTES,
            maxWriteBatchSize = positiveInt(r, "maxWriteBatchSize") ?: ConnectionDescription.DEFAULT_MAX_WRITE_BATCH_SIZE,
        )
    }

    /** `true`, or a number other than zero. */
    fun isTrue(v: BsonValue?): Boolean = when {
        v == null -> false
        v.isBoolean -> v.asBoolean().value
        v.isNumber -> v.asNumber().doubleValue() != 0.0
        else -> false
    }

    private fun string(r: BsonDocument, key: String): String? {
        val v = r[key] ?: return null
        return when {
            v.isString -> v.asString().value
            v.isNull -> null
            else -> bad(key, v)
        }
    }

    /** A size limit of the reply: a positive number, else null (not said, or a value no server sends: the default then). */
    private fun positiveInt(r: BsonDocument, key: String): Int? = r[key]?.takeIf { it.isNumber }?.asNumber()?.intValue()?.takeIf { it > 0 }

    private fun int(r: BsonDocument, key: String): Int? {
        val v = r[key] ?: return null
        return when {
            v.isNumber -> v.asNumber().intValue()
            v.isNull -> null
            else -> bad(key, v)
        }
    }

    private fun dateMillis(v: BsonValue, key: String): Long? = when {
        v.isDateTime -> v.asDateTime().value
        v.isNumber -> v.asNumber().longValue()
        v.isNull -> null
        else -> bad(key, v)
    }

    private fun hostSet(r: BsonDocument, key: String): Set<ServerAddress> {
        val v = r[key] ?: return emptySet()
        if (v.isNull) return emptySet()
        if (!v.isArray) bad(key, v)
        return v.asArray().mapTo(LinkedHashSet()) { if (it.isString) host(it.asString().value) else bad(key, it) }
    }

    private fun tags(r: BsonDocument): Map<String, String> {
        val v = r["tags"] ?: return emptyMap()
        if (!v.isDocument) return if (v.isNull) emptyMap() else bad("tags", v)
        return v.asDocument().entries.associate { (k, t) -> k to (if (t.isString) t.asString().value else t.toString()) }
    }

    private fun host(s: String): ServerAddress = ServerAddress.parse(s)

    private fun bad(key: String, v: BsonValue): Nothing = throw InvalidServerReplyException("field '$key' has unexpected value $v")
}
