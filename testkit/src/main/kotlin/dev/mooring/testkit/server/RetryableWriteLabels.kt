package dev.mooring.testkit.server

import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonString

/**
 * What MongoDB 4.4+ does to the reply of a retryable write (a command with `txnNumber` outside
 * a multi-document transaction, or the commitTransaction / abortTransaction that ends one): an error with a retryable code, or a writeConcernError with
 * one, gets the `RetryableWriteError` label in the top-level `errorLabels`. Pure; thread-safe.
 */
object RetryableWriteLabels {
    const val LABEL: String = "RetryableWriteError"

    /** The codes mongod labels: retryable-writes.md's list of retryable errors. */
    private val codes = setOf(11600, 11602, 10107, 13435, 13436, 189, 91, 7, 6, 89, 9001, 262)

    /** True when [command] is a retryable write as mongod sees it (commitTransaction and abortTransaction included). */
    fun isRetryableWrite(command: BsonDocument): Boolean =
        command.containsKey("txnNumber") &&
            (command["autocommit"]?.let { it.isBoolean && !it.asBoolean().value } != true || command.firstKey == "commitTransaction" || command.firstKey == "abortTransaction")

    /** [reply] with the label added when mongod would add it to the reply of [command]; [reply] itself otherwise. */
    fun apply(command: BsonDocument, reply: BsonDocument): BsonDocument {
        if (!isRetryableWrite(command)) return reply
        val ok = reply["ok"]?.takeIf { it.isNumber }?.asNumber()?.doubleValue() == 1.0
        val code = if (ok) (reply["writeConcernError"] as? BsonDocument)?.get("code") else reply["code"]
        val retryable = code != null && code.isNumber && code.asNumber().intValue() in codes
        if (!retryable) return reply
        val labels = (reply["errorLabels"] as? BsonArray) ?: BsonArray()
        if (labels.any { it.isString && it.asString().value == LABEL }) return reply
        return reply.clone().append("errorLabels", BsonArray(labels + BsonString(LABEL)))
    }
}
