package dev.mooring.sdam.internal.retry

import dev.mooring.cmap.MongoAuthenticationException
import dev.mooring.cmap.MongoCommandException
import dev.mooring.cmap.MongoIncompatibleServerException
import dev.mooring.cmap.MongoNetworkException
import dev.mooring.cmap.MongoServerException
import dev.mooring.cmap.PoolClearedException
import dev.mooring.events.MooringException
import dev.mooring.sdam.MongoClusterClosedException
import dev.mooring.sdam.MongoServerSelectionTimeoutException
import dev.mooring.sdam.ServerSelectionException
import org.bson.BsonArray
import org.bson.BsonDocument
import kotlin.coroutines.cancellation.CancellationException

/**
 * Which errors retryable reads and writes retry (retryable-reads.md, retryable-writes.md).
 * Pure; thread-safe.
 */
internal object RetryableErrors {
    const val RETRYABLE_WRITE_ERROR = "RetryableWriteError"
    const val NO_WRITES_PERFORMED = "NoWritesPerformed"

    /** Servers from this wire version on (MongoDB 4.4) label retryable write errors themselves. */
    const val SERVER_LABELS_WIRE_VERSION = 9

    /**
     * InterruptedAtShutdown, InterruptedDueToReplStateChange, NotWritablePrimary,
     * NotPrimaryNoSecondaryOk, NotPrimaryOrSecondary, PrimarySteppedDown, ShutdownInProgress,
     * HostNotFound, HostUnreachable, NetworkTimeout, SocketException, ExceededTimeLimit.
     */
    private val writeCodes = setOf(11600, 11602, 10107, 13435, 13436, 189, 91, 7, 6, 89, 9001, 262)

    /** The write codes plus ReadConcernMajorityNotAvailableYet. */
    private val readCodes = writeCodes + 134

    /**
     * A retryable read error: a network error, a pool-cleared error, or a server error with a
     * retryable code, whether it answered the read or the handshake or authentication of the
     * connection the read checked out (retryable-reads.md: "Any of the above retryable errors
     * that occur during a connection handshake (including the authentication step)").
     */
    fun isRetryableRead(e: Throwable): Boolean = when (e) {
        is CancellationException -> false
        is MongoNetworkException, is PoolClearedException -> true
        is MongoCommandException -> e.code in readCodes
        else -> establishmentCode(e) in readCodes
    }

    /**
     * The server's error code of an error that failed the establishment of a connection (before
     * its handshake completed): the `ok: 0` reply to the handshake's hello, or the server's refusal
     * of the authentication conversation (`saslStart`, `saslContinue`); null for any other error.
     */
    private fun establishmentCode(e: Throwable): Int? = when {
        e !is MongoServerException || e.handshakeCompleted -> null
        e is MongoCommandException -> e.code
        e is MongoAuthenticationException -> e.serverCode
        else -> null
    }

    /**
     * Adds the `RetryableWriteError` label the driver owes for an error of a retryable write on a
     * server of [maxWireVersion] (null: not known, the error came before a connection): to every
     * network error (while establishing the connection included) and pool-cleared error, to a
     * server error with a retryable code that failed the establishment of the connection (the
     * handshake or authentication: a reply to the handshake, not to the write, so whatever the
     * server's version), and before MongoDB 4.4 to server errors with a retryable code. Returns [e].
     */
    fun labelWriteError(e: Throwable, maxWireVersion: Int?): Throwable {
        if (e !is MooringException) return e
        val label = when (e) {
            is MongoNetworkException, is PoolClearedException -> true
            else -> when (val establishment = establishmentCode(e)) {
                null -> e is MongoCommandException && maxWireVersion != null && maxWireVersion < SERVER_LABELS_WIRE_VERSION && e.code in writeCodes
                else -> establishment in writeCodes
            }
        }
        if (label) e.addErrorLabel(RETRYABLE_WRITE_ERROR)
        return e
    }

    /** A retryable write error: one labelled `RetryableWriteError` (see [labelWriteError]). */
    fun isRetryableWrite(e: Throwable): Boolean = e !is CancellationException && e is MooringException && e.hasErrorLabel(RETRYABLE_WRITE_ERROR)

    /**
     * True when an `ok: 1` [reply] carries a retryable write concern error: labelled
     * `RetryableWriteError` by the server, or before MongoDB 4.4 a mongod's writeConcernError with
     * a retryable code (never a mongos's, [fromMongos]: retryable-writes.md "MUST NOT add a
     * RetryableWriteError label based on ... the `writeConcernError.code` field in a mongos response").
     */
    fun isRetryableWriteConcernError(reply: BsonDocument, maxWireVersion: Int, fromMongos: Boolean = false): Boolean {
        val labels = reply["errorLabels"] as? BsonArray
        if (labels != null && labels.any { it.isString && it.asString().value == RETRYABLE_WRITE_ERROR }) return true
        if (maxWireVersion >= SERVER_LABELS_WIRE_VERSION || fromMongos) return false
        val wce = reply["writeConcernError"] as? BsonDocument ?: return false
        val code = wce["code"]?.takeIf { it.isNumber }?.asNumber()?.intValue() ?: return false
        return code in writeCodes
    }

    /**
     * [reply] with the `RetryableWriteError` label added, as retryable-writes.md has drivers do
     * for servers before MongoDB 4.4 (which do not label), when it carries a retryable
     * writeConcernError without the label; [reply] itself otherwise.
     */
    fun labelWriteConcernReply(reply: BsonDocument, maxWireVersion: Int, fromMongos: Boolean = false): BsonDocument {
        val labels = reply["errorLabels"] as? BsonArray ?: BsonArray()
        if (labels.any { it.isString && it.asString().value == RETRYABLE_WRITE_ERROR }) return reply
        if (!isRetryableWriteConcernError(reply, maxWireVersion, fromMongos)) return reply
        return reply.clone().append("errorLabels", BsonArray(labels + org.bson.BsonString(RETRYABLE_WRITE_ERROR)))
    }

    /**
     * True when [e] means the retry could not even select a server (the first error is then
     * surfaced). A [MongoIncompatibleServerException] is one when selection raised it (no
     * connection, so no generation), not when a new connection's handshake did.
     */
    fun isSelectionFailure(e: Throwable): Boolean =
        e is MongoServerSelectionTimeoutException || e is ServerSelectionException || e is MongoClusterClosedException ||
            (e is MongoIncompatibleServerException && e.generation == null)

    /** True when [e] is labelled `NoWritesPerformed`. */
    fun noWritesPerformed(e: Throwable): Boolean = e is MooringException && e.hasErrorLabel(NO_WRITES_PERFORMED)
}
