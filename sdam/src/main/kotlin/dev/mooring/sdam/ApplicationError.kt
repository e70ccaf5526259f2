package dev.mooring.sdam

import dev.mooring.cmap.MongoCommandException
import dev.mooring.cmap.MongoNetworkException
import dev.mooring.cmap.MongoNetworkTimeoutException
import dev.mooring.cmap.MongoServerException
import dev.mooring.events.MooringException
import dev.mooring.events.ServerAddress
import dev.mooring.sdam.internal.HelloParser
import org.bson.BsonDocument
import org.bson.types.ObjectId

/** What kind of failure an [ApplicationError] is, for SDAM error handling. */
internal enum class ApplicationErrorKind {
    /** A reply with `ok: 0`, or a `writeConcernError` in an `ok: 1` reply: the connection is healthy. */
    COMMAND,

    /** A network error other than a timeout. */
    NETWORK,

    /** A network timeout. */
    NETWORK_TIMEOUT,

    /** Anything else (protocol errors, authentication failures, …). Matters to SDAM only before the handshake completes. */
    OTHER,
}

/**
 * A plain description of an error an application operation hit on one server, as SDAM error
 * handling needs it ([ErrorHandling.onApplicationError]). Immutable value; build it with
 * [fromCommandResponse] or [fromException], or directly (the spec runners do).
 */
internal data class ApplicationError(
    /** The server the operation ran on. */
    val address: ServerAddress,
    /** The kind of failure. */
    val kind: ApplicationErrorKind,
    /** The server error code (for [ApplicationErrorKind.COMMAND]), or null when the reply had none. */
    val code: Int? = null,
    /** The server's error message, or a description of the failure. */
    val message: String? = null,
    /** The topologyVersion the error reply carried, or null. */
    val topologyVersion: TopologyVersion? = null,
    /** The pool generation of the connection the error happened on; null when unknown (never treated as stale). */
    val generation: Int? = null,
    /** False when the error happened while the connection was still being established (handshake or authentication). */
    val handshakeCompleted: Boolean = true,
    /** The error labels (for example `SystemOverloadedError`). */
    val errorLabels: Set<String> = emptySet(),
    /** In load-balanced mode, the serviceId of the connection, or null. */
    val serviceId: ObjectId? = null,
    /** The exception behind this error, when there is one. */
    val cause: Throwable? = null,
) {
    /** A printable description used as the Unknown server description's error. */
    public fun describe(): String = buildString {
        append(kind.name.lowercase())
        append(" error on ").append(address)
        if (code != null) append(" (code ").append(code).append(')')
        if (message != null) append(": ").append(message)
    }

    public companion object {
        /** The label the pool adds to network errors during connection establishment and hello (backpressure). */
        public const val SYSTEM_OVERLOADED_ERROR_LABEL: String = "SystemOverloadedError"

        /**
         * The SDAM-relevant error in a command [response], or null when there is none: an
         * `ok: 0` reply gives its `code`/`errmsg` (legacy `$err` too); an `ok: 1` reply with a
         * `writeConcernError` gives the write concern error's code and message. Errors inside
         * `writeErrors` are never looked at. Pure.
         */
        @JvmStatic
        @JvmOverloads
        public fun fromCommandResponse(
            address: ServerAddress,
            response: BsonDocument,
            generation: Int? = null,
            handshakeCompleted: Boolean = true,
            serviceId: ObjectId? = null,
        ): ApplicationError? {
            val tv = (response["topologyVersion"] as? BsonDocument)?.let { TopologyVersion.fromBson(it) }
            val labels = labels(response)
            if (!HelloParser.isTrue(response["ok"])) {
                return ApplicationError(
                    address, ApplicationErrorKind.COMMAND,
                    code = codeOf(response),
                    message = response.getString("errmsg", null)?.value ?: response.getString("\$err", null)?.value,
                    topologyVersion = tv, generation = generation, handshakeCompleted = handshakeCompleted,
                    errorLabels = labels, serviceId = serviceId,
                )
            }
            val wce = response["writeConcernError"] as? BsonDocument ?: return null
            return ApplicationError(
                address, ApplicationErrorKind.COMMAND,
                code = codeOf(wce),
                message = wce.getString("errmsg", null)?.value,
                topologyVersion = tv, generation = generation, handshakeCompleted = handshakeCompleted,
                errorLabels = labels + labels(wce), serviceId = serviceId,
            )
        }

        /**
         * Classifies an exception from an application operation on [address]: the cmap error
         * types carry the generation, handshake state and labels; a [MongoCommandException]
         * is read like [fromCommandResponse] (null when its response holds no SDAM-relevant
         * error); any other [Throwable] is [ApplicationErrorKind.OTHER].
         */
        @JvmStatic
        @JvmOverloads
        public fun fromException(error: Throwable, address: ServerAddress, serviceId: ObjectId? = null): ApplicationError? {
            val server = error as? MongoServerException
            val generation = server?.generation
            val handshake = server?.handshakeCompleted ?: true
            val labels = (error as? MooringException)?.errorLabels ?: emptySet()
            val kind = when (error) {
                is MongoCommandException -> {
                    val e = fromCommandResponse(address, error.response, generation, handshake, serviceId) ?: return null
                    return e.copy(errorLabels = e.errorLabels + labels, cause = error)
                }
                is MongoNetworkTimeoutException -> ApplicationErrorKind.NETWORK_TIMEOUT
                is MongoNetworkException -> ApplicationErrorKind.NETWORK
                else -> ApplicationErrorKind.OTHER
            }
            return ApplicationError(
                address, kind, message = error.message ?: error.toString(), generation = generation,
                handshakeCompleted = handshake, errorLabels = labels, serviceId = serviceId, cause = error,
            )
        }

        private fun codeOf(d: BsonDocument): Int? = d["code"]?.takeIf { it.isNumber }?.asNumber()?.intValue()

        private fun labels(d: BsonDocument): Set<String> =
            (d["errorLabels"]?.takeIf { it.isArray }?.asArray()?.filter { it.isString }?.map { it.asString().value } ?: emptyList()).toSet()
    }
}
