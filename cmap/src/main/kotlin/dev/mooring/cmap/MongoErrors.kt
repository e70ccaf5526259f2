package dev.mooring.cmap

import dev.mooring.events.MooringException
import dev.mooring.events.ServerAddress
import org.bson.BsonDocument

/**
 * An error tied to one server and one connection. [generation] is the pool generation of the
 * connection the error happened on (SDAM uses it to ignore stale errors);
 * [handshakeCompleted] tells whether the connection had finished its handshake.
 */
public open class MongoServerException(
    message: String,
    public val address: ServerAddress,
    public val generation: Int? = null,
    public val handshakeCompleted: Boolean = true,
    cause: Throwable? = null,
) : MooringException(message, cause) {
    /**
     * True when the connection that raised this error is perished (CMAP: its wire state is unknown,
     * so it is closed when checked in) and SDAM applies its network-error rules: a network or
     * protocol error. The one rule both follow; a pooled connection marks itself perished by it.
     */
    public val perishesConnection: Boolean get() = this is MongoNetworkException || this is MongoProtocolException
}

/** A socket-level failure: refused, reset, closed mid-reply, DNS failure. The connection is closed. */
public open class MongoNetworkException(
    message: String,
    address: ServerAddress,
    generation: Int? = null,
    handshakeCompleted: Boolean = true,
    cause: Throwable? = null,
) : MongoServerException(message, address, generation, handshakeCompleted, cause)

/** A connect, read or write that ran past its timeout. The connection is closed. */
public class MongoNetworkTimeoutException(
    message: String,
    address: ServerAddress,
    generation: Int? = null,
    handshakeCompleted: Boolean = true,
    cause: Throwable? = null,
) : MongoNetworkException(message, address, generation, handshakeCompleted, cause)

/** Bytes that are not a valid reply: bad length, wrong responseTo, bad checksum, bad BSON. Only that connection is closed. */
public class MongoProtocolException(
    message: String,
    address: ServerAddress,
    generation: Int? = null,
    handshakeCompleted: Boolean = true,
    cause: Throwable? = null,
) : MongoServerException(message, address, generation, handshakeCompleted, cause)

/**
 * A reply with `ok: 0` (or a writeConcernError): the connection is healthy. Carries the
 * server's [code], [codeName], [errmsg], error labels and [topologyVersion] for SDAM.
 */
public class MongoCommandException(
    public val response: BsonDocument,
    address: ServerAddress,
    generation: Int? = null,
    handshakeCompleted: Boolean = true,
) : MongoServerException(describe(response, address), address, generation, handshakeCompleted) {
    public val code: Int get() = response.getNumber("code", org.bson.BsonInt32(0)).intValue()
    public val codeName: String? get() = response.getString("codeName", null)?.value
    public val errmsg: String? get() = response.getString("errmsg", null)?.value
    public val topologyVersion: BsonDocument? get() = response["topologyVersion"] as? BsonDocument

    init {
        (response["errorLabels"] as? org.bson.BsonArray)?.forEach { if (it.isString) addErrorLabel(it.asString().value) }
    }

    private companion object {
        fun describe(r: BsonDocument, a: ServerAddress): String {
            val code = r.getNumber("code", org.bson.BsonInt32(0)).intValue()
            val name = r.getString("codeName", null)?.value
            val msg = r.getString("errmsg", null)?.value
            return "Command failed on $a with error $code${if (name != null) " ($name)" else ""}: ${msg ?: "no message"}"
        }
    }
}
