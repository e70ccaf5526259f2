package dev.mooring.driver.internal

import dev.mooring.driver.ClientBulkWriteException
import dev.mooring.driver.ClientBulkWriteResult
import dev.mooring.driver.ClientDeleteResult
import dev.mooring.driver.ClientInsertOneResult
import dev.mooring.driver.ClientUpdateResult
import dev.mooring.driver.ClientVerboseResults
import dev.mooring.driver.WriteConcernError
import dev.mooring.driver.WriteError
import java.util.TreeMap
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString

/**
 * What the commands of one client bulk write reported so far (bulk-write.md "Handling the
 * bulkWrite Server Response"): the summary counts of each reply, the results cursor's entries
 * (write errors by model index; with [verbose], each successful write's result; an insert's
 * `_id` only once its `{ok: 1, n: 1}` entry came), write concern errors and error labels, and
 * whether at least one write is known to have succeeded (the rule for a partial result).
 * Confined to the bulk write's coroutine.
 */
internal class ClientBulkWriteResults(private val verbose: Boolean, private val ordered: Boolean) {
    private var inserted = 0L
    private var upserted = 0L
    private var matched = 0L
    private var modified = 0L
    private var deleted = 0L
    private val inserts = TreeMap<Int, ClientInsertOneResult>()
    private val updates = TreeMap<Int, ClientUpdateResult>()
    private val deletes = TreeMap<Int, ClientDeleteResult>()
    private val writeErrors = TreeMap<Int, WriteError>()
    private val writeConcernErrors = ArrayList<WriteConcernError>()
    private val labels = LinkedHashSet<String>()

    /** True once a reply was received: a later top-level error is reported with what is known. */
    private var observed = false

    /** True once at least one write is known to have succeeded. */
    private var succeeded = false

    /** True when an ordered bulk write saw a write error: nothing more runs. */
    val stopped: Boolean get() = ordered && writeErrors.isNotEmpty()

    /** Records the summary fields of [batch]'s command [reply]. */
    fun summary(batch: ClientBulkWriteBatch, reply: BsonDocument) {
        observed = true
        inserted += WriteReplies.count(reply, "nInserted")
        upserted += WriteReplies.count(reply, "nUpserted")
        matched += WriteReplies.count(reply, "nMatched")
        modified += WriteReplies.count(reply, "nModified")
        deleted += WriteReplies.count(reply, "nDeleted")
        WriteReplies.writeConcernError(reply)?.let { writeConcernErrors += it }
        labels += WriteReplies.errorLabels(reply)
        val nErrors = WriteReplies.count(reply, "nErrors")
        // an ordered command with errors: success is known once an error entry with idx > 0 comes
        if (nErrors == 0L || (!ordered && nErrors < batch.ops.size)) succeeded = true
    }

    /** Records one results cursor [entry] of [batch]. */
    fun entry(batch: ClientBulkWriteBatch, entry: BsonDocument) {
        val idx = entry.getNumber("idx", BsonInt32(-1)).intValue()
        val op = batch.ops.getOrNull(idx) ?: return
        if (entry["ok"]?.takeIf { it.isNumber }?.asNumber()?.doubleValue() != 1.0) {
            writeErrors[op.index] = WriteError(
                code = entry.getNumber("code", BsonInt32(0)).intValue(),
                message = entry.getString("errmsg", BsonString("")).value,
                details = entry["errInfo"]?.takeIf { it.isDocument }?.asDocument() ?: BsonDocument(),
                index = op.index,
            )
            if (ordered && idx > 0) succeeded = true
            return
        }
        succeeded = true
        if (!verbose) return
        val n = WriteReplies.count(entry, "n")
        when (op.kind) {
            ClientOpKind.INSERT -> if (n == 1L) op.insertedId?.let { inserts[op.index] = ClientInsertOneResult(it) }
            ClientOpKind.UPDATE -> {
                val upsertedId = entry["upserted"]?.takeIf { it.isDocument }?.asDocument()?.get("_id")
                // bulk-write.md's table: the entry's n is the documents that matched, an upserted one included
                updates[op.index] = ClientUpdateResult(n, WriteReplies.count(entry, "nModified"), upsertedId)
            }
            ClientOpKind.DELETE -> deletes[op.index] = ClientDeleteResult(n)
        }
    }

    fun result(): ClientBulkWriteResult.Acknowledged = ClientBulkWriteResult.Acknowledged(
        inserted, upserted, matched, modified, deleted,
        if (verbose) ClientVerboseResults(inserts.toMap(), updates.toMap(), deletes.toMap()) else null,
    )

    /** The result, or the [ClientBulkWriteException] of the write errors and write concern errors. */
    fun finish(): ClientBulkWriteResult.Acknowledged {
        if (writeErrors.isEmpty() && writeConcernErrors.isEmpty()) return result()
        throw exception(null)
    }

    /**
     * What to throw for the top-level [error] that stopped the bulk write: [error] itself when
     * nothing was observed yet, else a [ClientBulkWriteException] with it as its error.
     */
    fun interrupted(error: Throwable): Throwable = if (!observed && writeErrors.isEmpty()) error else exception(error)

    private fun exception(error: Throwable?): ClientBulkWriteException =
        ClientBulkWriteException(error, writeConcernErrors.toList(), writeErrors.toMap(), result().takeIf { succeeded })
            .apply { labels.forEach { addErrorLabel(it) } }
}
