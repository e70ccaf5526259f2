package dev.mooring.sdam.internal.topology

import org.bson.BsonDocument

/**
 * Which command reply, if any, an attempt's result is, so that [OperationRunner] hands a reply's
 * `writeConcernError` to SDAM error handling (a state change error there marks the server Unknown
 * like an `ok: 0`). Typed per operation: a value a caller's own block returns (withConnection)
 * is never taken for a command reply.
 */
internal fun interface AttemptReply<in T> {
    /** The command reply [result] is, or null when it is none. */
    fun replyOf(result: T): BsonDocument?

    companion object {
        /** The attempt returns the command's reply. */
        val COMMAND: AttemptReply<BsonDocument> = AttemptReply { it }

        /** The attempt's result is no command reply (a caller's value, a batch already taken apart). */
        val NONE: AttemptReply<Any?> = AttemptReply { null }
    }
}
