package dev.mooring.testkit.server

import org.bson.BsonBinary
import org.bson.BsonDocument
import org.bson.BsonInt64
import org.bson.BsonTimestamp
import org.bson.BsonValue
import java.nio.ByteBuffer
import java.security.SecureRandom
import javax.crypto.Mac
import javax.crypto.spec.SecretKeySpec

/**
 * The logical clock of a deployment that reports cluster times (a replica set or sharded cluster
 * of MongoDB 3.6+), shared by its servers ([WireServer.clusterTime]). As mongod does, every reply
 * carries `$clusterTime: {clusterTime: Timestamp, signature: {hash: BinData(0), keyId: Int64}}`
 * and `operationTime`; each write ticks the clock. The signature is an HMAC-SHA1 of the time
 * with this deployment's own key, so a `$clusterTime` a client sends is checked as mongod checks
 * it: a malformed one is refused with BadValue (2) or TypeMismatch (14), one signed with another
 * key with KeyNotFound (211), a forged signature with TimeProofMismatch (204); a valid one
 * higher than the clock advances it (gossip). Thread-safe.
 */
class ClusterTimeKeeper {
    private val key = ByteArray(20).also { SecureRandom().nextBytes(it) }

    /** The id of this deployment's signing key. */
    val keyId: Long = System.currentTimeMillis()

    private val lock = Any()
    private var seconds = (System.currentTimeMillis() / 1000).toInt()
    private var increment = 1

    /** The current cluster time as a reply's `$clusterTime` document. */
    fun current(): BsonDocument = synchronized(lock) { signed(BsonTimestamp(seconds, increment)) }

    /** Ticks the clock (a write happened) and returns the new time. */
    fun tick(): BsonTimestamp = synchronized(lock) {
        increment++
        BsonTimestamp(seconds, increment)
    }

    /** The `$clusterTime` document of [time], signed with this deployment's key. */
    fun signed(time: BsonTimestamp): BsonDocument = BsonDocument("clusterTime", time)
        .append("signature", BsonDocument("hash", BsonBinary(hash(time))).append("keyId", BsonInt64(keyId)))

    /**
     * Checks the `$clusterTime` of [command], if any, and advances the clock to it when valid and
     * higher; returns the error reply for an invalid one, null otherwise.
     */
    fun receive(command: BsonDocument): BsonDocument? {
        val sent = command["\$clusterTime"] ?: return null
        val time = (sent as? BsonDocument)?.get("clusterTime")
        val signature = (sent as? BsonDocument)?.get("signature") as? BsonDocument
        if (time == null || signature == null) return WireServer.error(2, "BadValue", "\$clusterTime needs clusterTime and signature, got $sent")
        if (!time.isTimestamp) return WireServer.error(14, "TypeMismatch", "\$clusterTime.clusterTime must be a Timestamp, got ${time.bsonType}")
        val hash = signature["hash"]
        val id = signature["keyId"]
        if (hash == null || !hash.isBinary || id == null || !id.isInt64) {
            return WireServer.error(14, "TypeMismatch", "\$clusterTime.signature needs hash (BinData) and keyId (long), got $signature")
        }
        if (id.asInt64().value != keyId) return WireServer.error(211, "KeyNotFound", "No keys found for HMAC that is valid for time: ${time.asTimestamp()} with id: ${id.asInt64().value}")
        if (!hash.asBinary().data.contentEquals(hash(time.asTimestamp()))) return WireServer.error(204, "TimeProofMismatch", "Cluster time proof mismatch for $sent")
        advanceTo(time.asTimestamp())
        return null
    }

    /** [reply] with this deployment's `$clusterTime` and `operationTime` (the current time). */
    fun stamp(reply: BsonDocument): BsonDocument {
        val now = current()
        return reply.clone().append("\$clusterTime", now).append("operationTime", now["clusterTime"]!!)
    }

    private fun advanceTo(time: BsonTimestamp) = synchronized(lock) {
        if (java.lang.Long.compareUnsigned(time.value, BsonTimestamp(seconds, increment).value) > 0) {
            seconds = time.time
            increment = time.inc
        }
    }

    private fun hash(time: BsonValue): ByteArray {
        val mac = Mac.getInstance("HmacSHA1")
        mac.init(SecretKeySpec(key, "HmacSHA1"))
        return mac.doFinal(ByteBuffer.allocate(8).putLong(time.asTimestamp().value).array())
    }
}
