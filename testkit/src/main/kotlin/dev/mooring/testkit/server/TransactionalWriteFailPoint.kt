package dev.mooring.testkit.server

import org.bson.BsonDocument

/**
 * mongod's `onPrimaryTransactionalWrite` fail point: evaluated once per statement of a
 * retryable write (a command with `txnNumber`) on the primary. When it fires, the statement
 * either fails before it commits (`data.failBeforeCommitExceptionCode` set) or commits first;
 * then the connection is closed (`data.closeConnection`, default true) or, without
 * closeConnection, the command fails with failBeforeCommitExceptionCode. `mode` is as for
 * [FailCommandFailPoint]. Thread-safe (evaluation is synchronized).
 */
class TransactionalWriteFailPoint private constructor(
    private val mode: FailCommandFailPoint.Mode,
    val closeConnection: Boolean,
    val failBeforeCommitExceptionCode: Int?,
) {
    /** Counts one statement; true when the fail point fires for it. */
    @Synchronized
    fun fires(): Boolean = mode.fire()

    companion object {
        const val NAME: String = "onPrimaryTransactionalWrite"

        /** Parses `{configureFailPoint: "onPrimaryTransactionalWrite", mode, data?}`; null for mode `off`. */
        fun parse(command: BsonDocument): TransactionalWriteFailPoint? {
            val mode = FailCommandFailPoint.parseMode(command["mode"] ?: throw IllegalArgumentException("missing mode")) ?: return null
            val data = command["data"]?.let { require(it.isDocument) { "data must be a document" }; it.asDocument() } ?: BsonDocument()
            val close = data["closeConnection"]?.let { require(it.isBoolean) { "closeConnection must be a boolean" }; it.asBoolean().value } ?: true
            val code = data["failBeforeCommitExceptionCode"]?.let { require(it.isNumber) { "failBeforeCommitExceptionCode must be a number" }; it.asNumber().intValue() }
            require(close || code != null) { "without closeConnection, $NAME needs failBeforeCommitExceptionCode" }
            return TransactionalWriteFailPoint(mode, close, code)
        }
    }
}

/**
 * Thrown by the in-memory collections when a fail point ends the connection in the middle of a
 * command; the server closes the connection without answering.
 */
class FailPointClosedConnection(message: String) : RuntimeException(message)

/** Thrown when [TransactionalWriteFailPoint] fails a statement with [code] without closing the connection. */
class FailPointStatementError(val code: Int) : RuntimeException("Failing write via '${TransactionalWriteFailPoint.NAME}' failpoint")
