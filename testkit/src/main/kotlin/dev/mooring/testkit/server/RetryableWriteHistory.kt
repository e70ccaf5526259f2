package dev.mooring.testkit.server

import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonValue

/**
 * What mongod remembers of retryable writes (retryable-writes.md, "Supported Server
 * Operations"): a write sent with `lsid` and `txnNumber` runs statement by statement, and each
 * statement that succeeded is recorded under (lsid, txnNumber, statement index), so a retry of
 * the same transaction number returns the recorded outcome instead of applying the statement
 * again. Evaluates the [TransactionalWriteFailPoint] once per statement. Not thread-safe on its
 * own: [InMemoryCollections] calls it under its lock.
 */
internal class RetryableWriteHistory {
    private data class Key(val lsid: BsonValue, val txnNumber: Long, val statement: Int)

    private val executed = HashMap<Key, BsonDocument>()

    /** Runs the retryable write [cmd]; [single] executes a command holding one statement. */
    fun run(cmd: BsonDocument, failPoint: TransactionalWriteFailPoint?, single: (BsonDocument) -> BsonDocument): BsonDocument {
        val field = STATEMENTS[cmd.firstKey]
        val lsid = (cmd["lsid"] as? BsonDocument)?.get("id") ?: cmd["lsid"]!!
        val txnNumber = cmd["txnNumber"]!!.asNumber().longValue()
        val statements: List<BsonValue?> = if (field == null) listOf(null) else (cmd[field] as? BsonArray ?: return single(cmd)).toList()
        val ordered = cmd["ordered"]?.let { it.isBoolean && !it.asBoolean().value } != true
        val parts = ArrayList<Pair<Int, BsonDocument>>()
        for ((i, statement) in statements.withIndex()) {
            val reply = statement(lsid, txnNumber, i, failPoint) {
                single(if (field == null) cmd else cmd.clone().append(field, BsonArray(listOf(statement))))
            }
            if (!ok(reply)) return reply
            parts += i to reply
            if (ordered && reply.containsKey("writeErrors")) break
        }
        return if (field == null) parts.single().second else merge(parts)
    }

    /**
     * Statement [index] of the retryable write ([lsid], [txnNumber]): its recorded reply when it
     * succeeded before, else [execute]'s (recorded when it succeeds), under the [failPoint].
     */
    fun statement(lsid: BsonValue, txnNumber: Long, index: Int, failPoint: TransactionalWriteFailPoint?, execute: () -> BsonDocument): BsonDocument {
        val key = Key(lsid, txnNumber, index)
        executed[key]?.let { return it }
        val fires = failPoint?.fires() == true
        if (fires && failPoint!!.failBeforeCommitExceptionCode != null) fail(failPoint)
        val r = execute()
        if (succeeded(r)) executed[key] = r
        if (fires) fail(failPoint!!)
        return r
    }

    private fun fail(fp: TransactionalWriteFailPoint): Nothing {
        if (fp.closeConnection) throw FailPointClosedConnection("${TransactionalWriteFailPoint.NAME} closed the connection")
        throw FailPointStatementError(fp.failBeforeCommitExceptionCode!!)
    }

    /** One reply for the statements' replies, with their indexes restored. */
    private fun merge(parts: List<Pair<Int, BsonDocument>>): BsonDocument {
        val reply = BsonDocument("n", BsonInt32(parts.sumOf { it.second.getNumber("n", BsonInt32(0)).intValue() }))
        if (parts.any { it.second.containsKey("nModified") }) {
            reply["nModified"] = BsonInt32(parts.sumOf { it.second.getNumber("nModified", BsonInt32(0)).intValue() })
        }
        for (list in listOf("upserted", "writeErrors")) {
            val merged = BsonArray(parts.flatMap { (i, r) -> (r[list] as? BsonArray ?: BsonArray()).map { e -> e.asDocument().clone().append("index", BsonInt32(i)) } })
            if (merged.isNotEmpty()) reply[list] = merged
        }
        return reply.append("ok", BsonInt32(1))
    }

    private fun ok(r: BsonDocument) = r["ok"]?.takeIf { it.isNumber }?.asNumber()?.doubleValue() == 1.0

    private fun succeeded(r: BsonDocument) = ok(r) && !r.containsKey("writeErrors")

    companion object {
        /** The statement array of each retryable write command (findAndModify is one statement). */
        private val STATEMENTS = mapOf("insert" to "documents", "update" to "updates", "delete" to "deletes", "findAndModify" to null)

        /** True when [cmd] is a write this history tracks. */
        fun tracks(cmd: BsonDocument): Boolean = cmd.firstKey in STATEMENTS && RetryableWriteLabels.isRetryableWrite(cmd) && cmd.containsKey("lsid")
    }
}
