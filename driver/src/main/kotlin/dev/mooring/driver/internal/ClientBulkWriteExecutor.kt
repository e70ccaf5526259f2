package dev.mooring.driver.internal

import dev.mooring.sdam.internal.HelperCommand
import dev.mooring.driver.ClientBulkWriteOptions
import dev.mooring.driver.ClientBulkWriteResult
import dev.mooring.driver.ClientNamespacedWriteModel
import dev.mooring.sdam.ClientSession
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.ReadPreference
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.withContext
import org.bson.BsonArray
import org.bson.BsonBoolean
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonInt64
import org.bson.BsonString

/**
 * A client bulk write (bulk-write.md): the models as `ops`, split into commands at the server's
 * limits ([ClientBulkWriteBatches]), each command sent to `admin` as a retryable write unless it
 * holds a multi-document write (then once, with runCommand), its results cursor read to the end
 * (getMore in the same session), the outcome merged ([ClientBulkWriteResults]). One timeoutMS
 * bounds the whole bulk write ([MultiCommandDeadline]). One instance per call; not thread-safe.
 */
internal class ClientBulkWriteExecutor(private val cluster: MongoCluster, timeoutMS: Long?) {
    private val timeoutMS: Long? = timeoutMS ?: cluster.settings.timeoutMS

    suspend fun execute(models: List<ClientNamespacedWriteModel<*>>, options: ClientBulkWriteOptions, session: ClientSession?): ClientBulkWriteResult {
        require(models.isNotEmpty()) { "a client bulk write needs at least one write model" }
        require(timeoutMS == null || timeoutMS >= 0) { "timeoutMS must not be negative, got $timeoutMS" }
        val writeConcern = options.writeConcern ?: cluster.settings.writeConcern
        val unacknowledged = Concerns.isUnacknowledged(writeConcern)
        // bulk-write.md "ordered" and "errorsOnly and verboseResults": client-side errors with these exact messages
        require(!(unacknowledged && options.ordered)) { "Cannot request unacknowledged write concern and ordered writes" }
        require(!(unacknowledged && options.verboseResults == true)) { "Cannot request unacknowledged write concern and verbose results" }
        val encoder = DocumentEncoder().batch(models.size)
        val ops = models.mapIndexed { i, m -> ClientWriteOps.of(i, m, encoder) }
        val deadline = MultiCommandDeadline(timeoutMS)
        val limits = ServerLimitsSource().get(cluster, deadline.next())
        check(limits.maxWireVersion == 0 || limits.maxWireVersion >= WIRE_VERSION_8_0) {
            "a client bulk write needs MongoDB 8.0 or newer (wire version $WIRE_VERSION_8_0); the server reports wire version ${limits.maxWireVersion}"
        }
        val base = base(options, writeConcern)
        val batches = ClientBulkWriteBatches.split(ops, base, limits)
        val results = ClientBulkWriteResults(options.verboseResults == true, options.ordered)
        // the results cursor's getMores need the command's lsid: a session of our own when the caller gave none
        val own = if (session == null && !unacknowledged) cluster.startSession() else null
        try {
            for (batch in batches) {
                val command = batch.command(base)
                val reply = try {
                    if (batch.multi) {
                        HelperCommand.run(cluster, ADMIN, command, ReadPreference.PRIMARY, session ?: own, deadline.next())
                    } else {
                        cluster.runRetryableWrite(ADMIN, command, session ?: own, deadline.next())
                    }
                } catch (e: CancellationException) {
                    throw e
                } catch (e: Exception) {
                    throw results.interrupted(e)
                }
                if (unacknowledged) continue
                results.summary(batch, reply)
                readCursor(batch, reply, session ?: own, deadline, results)
                if (results.stopped) break
            }
        } finally {
            own?.close()
        }
        return if (unacknowledged) ClientBulkWriteResult.Unacknowledged else results.finish()
    }

    /** The command without `ops` and `nsInfo`: `bulkWrite`, `errorsOnly`, `ordered` and the options given. */
    private fun base(options: ClientBulkWriteOptions, writeConcern: dev.mooring.sdam.WriteConcern): BsonDocument {
        val cmd = BsonDocument("bulkWrite", BsonInt32(1))
            .append("errorsOnly", BsonBoolean.valueOf(options.verboseResults != true))
            .append("ordered", BsonBoolean.valueOf(options.ordered))
        cmd.opt("bypassDocumentValidation", options.bypassDocumentValidation).opt("comment", options.comment).optDoc("let", options.let).optRawData(options.rawData)
        Concerns.applyWriteConcern(cmd, writeConcern, cluster.settings.writeConcern, timeoutMS != null)
        return cmd
    }

    /**
     * Records the entries of [reply]'s results cursor, with getMores in [session] while the server
     * holds more. A failed getMore ends the bulk write: the cursor is killed (its own failure
     * attached as suppressed) and the error thrown with what was observed.
     */
    private suspend fun readCursor(batch: ClientBulkWriteBatch, reply: BsonDocument, session: ClientSession?, deadline: MultiCommandDeadline, results: ClientBulkWriteResults) {
        val cursor = reply["cursor"]?.takeIf { it.isDocument }?.asDocument() ?: return
        cursor["firstBatch"]?.takeIf { it.isArray }?.asArray()?.forEach { results.entry(batch, it.asDocument()) }
        var id = cursor["id"]?.takeIf { it.isNumber }?.asNumber()?.longValue() ?: 0L
        val ns = cursor.getString("ns", BsonString("$ADMIN.\$cmd.bulkWrite")).value
        val db = ns.substringBefore('.')
        val collection = ns.substringAfter('.')
        while (id != 0L) {
            val more = try {
                cluster.runCommand(db, BsonDocument("getMore", BsonInt64(id)).append("collection", BsonString(collection)), ReadPreference.PRIMARY, session, deadline.next())
            } catch (e: CancellationException) {
                kill(db, collection, id, session)
                throw e
            } catch (e: Exception) {
                kill(db, collection, id, session)?.let { e.addSuppressed(it) }
                throw results.interrupted(e)
            }
            val next = more.getDocument("cursor", BsonDocument())
            next["nextBatch"]?.takeIf { it.isArray }?.asArray()?.forEach { results.entry(batch, it.asDocument()) }
            id = next["id"]?.takeIf { it.isNumber }?.asNumber()?.longValue() ?: 0L
        }
    }

    /** killCursors for the results cursor [id] (bulk-write.md: after a top-level error); its error, or null. */
    private suspend fun kill(db: String, collection: String, id: Long, session: ClientSession?): Exception? = withContext(NonCancellable) {
        try {
            cluster.runCommand(db, BsonDocument("killCursors", BsonString(collection)).append("cursors", BsonArray(listOf(BsonInt64(id)))), ReadPreference.PRIMARY, session)
            null
        } catch (e: Exception) {
            e
        }
    }

    private companion object {
        const val ADMIN = "admin"

        /** MongoDB 8.0, which introduced the bulkWrite command. */
        const val WIRE_VERSION_8_0 = 25
    }
}
