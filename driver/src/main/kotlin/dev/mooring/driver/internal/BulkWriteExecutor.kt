package dev.mooring.driver.internal

import dev.mooring.sdam.internal.HelperCommand
import dev.mooring.driver.BulkWriteOptions
import dev.mooring.driver.BulkWriteResult
import dev.mooring.driver.MongoBulkWriteException
import dev.mooring.driver.WriteConcernError
import dev.mooring.driver.WriteError
import dev.mooring.driver.WriteModel
import dev.mooring.sdam.ClientSession
import dev.mooring.sdam.ReadPreference
import kotlinx.coroutines.CancellationException
import org.bson.BsonArray
import org.bson.BsonBoolean
import org.bson.BsonDocument
import org.bson.BsonString
import org.bson.BsonValue

/**
 * A collection bulk write (crud.md `bulkWrite`; also insertMany and the single writes, as a bulk
 * of one): the models as statements, consecutive statements of one kind in one command, each
 * command split into batches of at most the server's `maxWriteBatchSize` statements and
 * [ServerLimits.maxBatchBytes] bytes. A batch is a retryable write (`runRetryableWrite`) unless it
 * holds a multi statement (`runCommand` on the primary, sent once). An ordered bulk write stops at
 * the first batch with a write error. One timeoutMS bounds the whole bulk write ([MultiCommandDeadline]). One instance per call; not thread-safe.
 */
internal class BulkWriteExecutor<T : Any>(
    private val defaults: Defaults,
    private val collection: String,
    private val codec: DocumentCodec<T>,
    /**
     * True (bulkWrite, insertMany): an error that interrupts an acknowledged bulk write carries
     * what was done before it as a suppressed [MongoBulkWriteException] (see
     * [dev.mooring.driver.interruptedBulkWrite]); false for the single writes, bulk writes of one.
     */
    private val reportsInterruption: Boolean = true,
) {
    suspend fun execute(models: List<WriteModel<T>>, options: BulkWriteOptions, session: ClientSession?): BulkWriteResult {
        require(models.isNotEmpty()) { "a bulk write needs at least one write model" }
        val cluster = defaults.cluster
        val deadline = MultiCommandDeadline(defaults)
        val limits = defaults.limits.get(cluster, deadline.next())
        val statements = WriteStatements.of(models, codec, limits.maxBsonObjectSize)
        // in a transaction the collection's write concern is not sent (transactions.md): every write is acknowledged
        val unacknowledged = Concerns.isUnacknowledged(defaults.writeConcern) && session?.isInTransaction != true
        limits.checkUnacknowledgedHint(unacknowledged, statements.any { it.hinted })
        val acc = Accumulator(options.ordered)
        for (batch in batches(statements, limits)) {
            val cmd = command(batch, options)
            val reply = try {
                if (batch.any { it.multi }) {
                    HelperCommand.run(cluster, defaults.databaseName, cmd, ReadPreference.PRIMARY, session, deadline.next())
                } else {
                    cluster.runRetryableWrite(defaults.databaseName, cmd, session, deadline.next())
                }
            } catch (e: CancellationException) {
                throw e
            } catch (e: Exception) {
                // crud.md BulkWriteException.writeResult: the error goes on as it is, with what was done before it
                if (reportsInterruption && !unacknowledged) e.addSuppressed(acc.exception("${defaults.databaseName}.$collection"))
                throw e
            }
            if (unacknowledged) {
                batch.forEach { s -> s.insertedId?.let { acc.insertedIds.add(s.index, it) } }
                continue
            }
            val stop = acc.add(batch, reply) && options.ordered
            if (stop) break
        }
        if (unacknowledged) return BulkWriteResult.Unacknowledged(acc.insertedIds.snapshot())
        val result = acc.result()
        if (acc.writeErrors.isNotEmpty() || acc.writeConcernErrors.isNotEmpty()) throw acc.exception("${defaults.databaseName}.$collection")
        return result
    }

    private fun command(batch: List<WriteStatement>, options: BulkWriteOptions): BsonDocument {
        val kind = batch[0].kind
        val cmd = BsonDocument(kind.command, BsonString(collection))
            .append(kind.array, BsonArray(batch.map { it.document }))
            .append("ordered", BsonBoolean.valueOf(options.ordered))
        if (kind != WriteKind.DELETE) cmd.opt("bypassDocumentValidation", options.bypassDocumentValidation)
        if (kind != WriteKind.INSERT) cmd.optDoc("let", options.let)
        cmd.opt("comment", options.comment).optRawData(options.rawData)
        Concerns.applyWriteConcern(cmd, defaults.writeConcern, defaults.cluster.settings.writeConcern, defaults.timeoutSet)
        return cmd
    }

    /** What the batches reported so far. */
    private class Accumulator(private val ordered: Boolean) {
        var inserted = 0L
        var matched = 0L
        var modified = 0L
        var deleted = 0L
        val upsertedIds = LinkedHashMap<Int, BsonValue>()
        val insertedIds = IndexedIds()
        val writeErrors = ArrayList<WriteError>()
        val writeConcernErrors = ArrayList<WriteConcernError>()
        val labels = LinkedHashSet<String>()

        /** Adds [batch]'s [reply]; true when it reported a write error. */
        fun add(batch: List<WriteStatement>, reply: BsonDocument): Boolean {
            val errors = WriteReplies.writeErrors(reply) { batch[it].index }
            writeErrors += errors
            WriteReplies.writeConcernError(reply)?.let { writeConcernErrors += it }
            labels += WriteReplies.errorLabels(reply)
            val n = WriteReplies.count(reply, "n")
            when (batch[0].kind) {
                WriteKind.INSERT -> {
                    inserted += n
                    if (errors.isEmpty()) {
                        batch.forEach { s -> s.insertedId?.let { insertedIds.add(s.index, it) } }
                    } else {
                        val failed = errors.map { it.index }.toSet()
                        // an ordered batch stops at its first error: later statements were not run
                        val firstFailed = errors.minOf { it.index }
                        batch.forEach { s ->
                            if (s.index !in failed && (!ordered || s.index < firstFailed)) s.insertedId?.let { insertedIds.add(s.index, it) }
                        }
                    }
                }
                WriteKind.UPDATE -> {
                    val upserted = reply["upserted"]?.takeIf { it.isArray }?.asArray().orEmpty()
                    upserted.forEach { u ->
                        val d = u.asDocument()
                        upsertedIds[batch[d.getNumber("index").intValue()].index] = d["_id"]!!
                    }
                    matched += n - upserted.size
                    modified += WriteReplies.count(reply, "nModified")
                }
                WriteKind.DELETE -> deleted += n
            }
            return errors.isNotEmpty()
        }

        /** The [MongoBulkWriteException] of what was reported so far, on [namespace]. */
        fun exception(namespace: String): MongoBulkWriteException =
            MongoBulkWriteException(writeErrors.toList(), writeConcernErrors.toList(), result(), namespace).apply { labels.forEach { addErrorLabel(it) } }

        fun result(): BulkWriteResult.Acknowledged =
            BulkWriteResult.Acknowledged(inserted, matched, modified, deleted, upsertedIds.size.toLong(), upsertedIds.toMap(), insertedIds.snapshot())
    }

    companion object {
        /** Per element of a command's array: the type byte, the index as a key and its NUL. */
        private const val ELEMENT_OVERHEAD = 1 + 7 + 1

        /** [statements] grouped into consecutive runs of one kind, each cut at the server's limits. */
        fun batches(statements: List<WriteStatement>, limits: ServerLimits): List<List<WriteStatement>> {
            val out = ArrayList<List<WriteStatement>>()
            var current = ArrayList<WriteStatement>()
            var bytes = 0
            for (s in statements) {
                val size = s.size + ELEMENT_OVERHEAD
                val full = current.isNotEmpty() &&
                    (current[0].kind != s.kind || current.size >= limits.maxWriteBatchSize || bytes + size > limits.maxBatchBytes)
                if (full) {
                    out += current
                    current = ArrayList()
                    bytes = 0
                }
                current += s
                bytes += size
            }
            if (current.isNotEmpty()) out += current
            return out
        }
    }
}
