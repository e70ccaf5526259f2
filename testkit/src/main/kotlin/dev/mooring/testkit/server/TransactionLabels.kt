package dev.mooring.testkit.server

import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonString

/**
 * The `TransientTransactionError` label mongod adds to the error reply of a command in a
 * transaction (`autocommit: false`): for WriteConflict, LockTimeout, PreparedTransactionInProgress
 * and the snapshot errors; inside the transaction also for the retryable errors
 * (NotWritablePrimary, ShutdownInProgress, ...) and NoSuchTransaction; for commitTransaction and
 * abortTransaction for NoSuchTransaction without a write concern error. Pure; thread-safe.
 */
object TransactionLabels {
    const val TRANSIENT: String = "TransientTransactionError"

    private val always = setOf(112, 24, 267, 239, 246)
    private val retryable = setOf(11600, 11602, 10107, 13435, 13436, 189, 91, 7, 6, 89, 9001, 262)

    /** [reply] with the label added when mongod would add it to the reply of [command]; [reply] itself otherwise. */
    fun apply(command: BsonDocument, reply: BsonDocument): BsonDocument {
        if (!ServerTransactions.inTransaction(command)) return reply
        val ok = reply["ok"]?.takeIf { it.isNumber }?.asNumber()?.doubleValue() == 1.0
        if (ok) return reply
        val code = reply["code"]?.takeIf { it.isNumber }?.asNumber()?.intValue() ?: return reply
        val end = command.firstKey == ServerTransactions.COMMIT || command.firstKey == ServerTransactions.ABORT
        val transient = code in always || (if (end) code == 251 && !reply.containsKey("writeConcernError") else code in retryable || code == 251)
        if (!transient) return reply
        val labels = (reply["errorLabels"] as? BsonArray) ?: BsonArray()
        if (labels.any { it.isString && it.asString().value == TRANSIENT }) return reply
        return reply.clone().append("errorLabels", BsonArray(labels + BsonString(TRANSIENT)))
    }
}
