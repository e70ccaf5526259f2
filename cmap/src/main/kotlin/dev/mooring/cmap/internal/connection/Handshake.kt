package dev.mooring.cmap.internal.connection

import dev.mooring.cmap.ClientWireVersion
import dev.mooring.cmap.ConnectionDescription
import dev.mooring.cmap.ConnectionSettings
import dev.mooring.cmap.MongoHandshakeException
import dev.mooring.cmap.MongoIncompatibleServerException
import dev.mooring.events.ServerAddress
import dev.mooring.cmap.internal.wire.compression.Compressors
import org.bson.BsonArray
import org.bson.BsonBoolean
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString
import org.bson.BsonValue

/**
 * The initial handshake of handshake.md: builds the command and turns the reply into a
 * [ConnectionDescription]. Immutable; thread-safe; shared by all connections of a factory.
 *
 * @param forMonitoring monitoring connections never authenticate (no `saslSupportedMechs`)
 *   and do not reject incompatible wire versions (SDAM records those in the topology).
 */
internal class Handshake(
    private val settings: ConnectionSettings,
    private val clientMetadata: BsonDocument,
    private val forMonitoring: Boolean,
) {
    /** True when the first message is `hello` (Stable API declared or load-balanced), else legacy hello. */
    val usesHello: Boolean get() = settings.serverApi != null || settings.loadBalanced

    /**
     * The handshake command, without `$db` (the connection adds it and the API version).
     * [speculativeAuthenticate] (the mechanism's first message, auth.md) is added for pooled
     * connections only; monitors never authenticate.
     */
    fun command(speculativeAuthenticate: BsonDocument? = null): BsonDocument {
        val cmd = if (usesHello) {
            BsonDocument("hello", BsonInt32(1))
        } else {
            BsonDocument("isMaster", BsonInt32(1)).append("helloOk", BsonBoolean.TRUE)
        }
        cmd["backpressure"] = BsonString("2")
        cmd["client"] = clientMetadata
        if (settings.compressors.isNotEmpty()) cmd["compression"] = BsonArray(settings.compressors.map { BsonString(it) })
        if (settings.loadBalanced) cmd["loadBalanced"] = BsonBoolean.TRUE
        val cred = settings.credential
        if (!forMonitoring && cred != null && cred.mechanism == null && cred.username != null) {
            cmd["saslSupportedMechs"] = BsonString("${cred.source}.${cred.username}")
        }
        if (!forMonitoring && speculativeAuthenticate != null) cmd["speculativeAuthenticate"] = speculativeAuthenticate
        return cmd
    }

    /** Parses an `ok: 1` reply; throws [MongoIncompatibleServerException] / [MongoHandshakeException]. */
    fun describe(reply: BsonDocument, address: ServerAddress, generation: Int): ConnectionDescription {
        val minWire = intOf(reply["minWireVersion"]) ?: 0
        val maxWire = intOf(reply["maxWireVersion"]) ?: 0
        if (!forMonitoring) {
            ClientWireVersion.compatibilityError(address, minWire, maxWire)?.let {
                throw MongoIncompatibleServerException(it, address, generation)
            }
        }
        val serviceId = (reply["serviceId"])?.takeIf { it.isObjectId }?.asObjectId()?.value
        if (settings.loadBalanced && serviceId == null) {
            throw MongoHandshakeException(
                "Driver attempted to initialize in load balancing mode, but the server at $address does not support this mode " +
                    "(the hello reply has no serviceId)",
                address,
                generation,
            )
        }
        // the server answers with the subset of our list it supports; use the first we implement
        val compressor = (reply["compression"] as? BsonArray)?.filter { it.isString }?.map { it.asString().value }
            ?.firstOrNull { it in settings.compressors && it in Compressors.NAMES }
        return ConnectionDescription(
            address = address,
            helloReply = reply,
            minWireVersion = minWire,
            maxWireVersion = maxWire,
            maxBsonObjectSize = positive(reply["maxBsonObjectSize"]) ?: ConnectionDescription.DEFAULT_MAX_BSON_OBJECT_SIZE,
            maxMessageSizeBytes = positive(reply["maxMessageSizeBytes"]) ?: ConnectionDescription.DEFAULT_MAX_MESSAGE_SIZE_BYTES,
            maxWriteBatchSize = positive(reply["maxWriteBatchSize"]) ?: ConnectionDescription.DEFAULT_MAX_WRITE_BATCH_SIZE,
            serverConnectionId = reply["connectionId"]?.takeIf { it.isNumber }?.asNumber()?.longValue(),
            serviceId = serviceId,
            helloOk = usesHello || reply["helloOk"]?.let { it.isBoolean && it.asBoolean().value } == true,
            compressor = compressor,
        )
    }

    private fun intOf(v: BsonValue?): Int? = v?.takeIf { it.isNumber }?.asNumber()?.intValue()

    private fun positive(v: BsonValue?): Int? = intOf(v)?.takeIf { it > 0 }
}
