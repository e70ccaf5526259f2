package dev.mooring.testkit.server.changes

import de.bwaldvogel.mongo.backend.aggregation.Aggregation
import de.bwaldvogel.mongo.bson.Document
import de.bwaldvogel.mongo.exception.MongoServerError
import de.bwaldvogel.mongo.exception.MongoServerException
import de.bwaldvogel.mongo.oplog.NoopOplog
import dev.mooring.testkit.server.BackendDocuments
import dev.mooring.testkit.server.WireServer
import kotlinx.coroutines.delay
import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonInt64
import org.bson.BsonNull
import org.bson.BsonString
import java.util.concurrent.atomic.AtomicLong

/**
 * The change streams open on one server (an `aggregate` whose pipeline starts with `$changeStream`,
 * as mongod serves them): each reads the [ChangeEventLog] of the server's data from where it
 * starts (`resumeAfter`/`startAfter` a token, `startAtOperationTime`, or now), keeps the events of
 * its scope (a collection; a database but its system collections; the cluster but admin, local and
 * config; the expanded events only with `showExpandedEvents`), shapes them with the rest of the
 * pipeline (the data engine's aggregation stages, so `$match`, `$project`, `$addFields`,
 * `$replaceRoot`, `$redact` work as on mongod; an event whose `_id` the pipeline changed is
 * ChangeStreamFatalError 280) and returns them in batches with a `postBatchResumeToken`. A
 * collection stream ends with an `invalidate` event after its collection is dropped or renamed, a
 * database stream after the database is dropped. A getMore waits up to its `maxTimeMS` (default
 * 1 s) for an event. Cursors belong to their [owner] as [dev.mooring.testkit.server.ServerCursors]'
 * do. Thread-safe.
 */
class ChangeStreamCursors {
    private sealed interface Scope {
        data class Collection(val db: String, val coll: String) : Scope
        data class Database(val db: String) : Scope
        data object Cluster : Scope
    }

    private class Stream(
        val ns: String,
        val owner: Int,
        val scope: Scope,
        val spec: BsonDocument,
        val pipeline: Aggregation?,
        var position: Long,
        val log: ChangeEventLog,
        val read: (String, String) -> List<BsonDocument>,
    ) {
        var invalidateAt: ChangeEventLog.Entry? = null
        var done = false
    }

    private val open = HashMap<Long, Stream>() // guarded by this
    private val ids = AtomicLong(7_000_000_000L)

    /** The number of change streams open on this server now. */
    val openCount: Int get() = synchronized(this) { open.size }

    /**
     * The reply to the change stream `aggregate` [cmd] on [db] from [owner], over [log]; [read] looks
     * documents up (updateLookup); [hello] is the server's hello reply: a standalone (no setName, not a
     * mongos) refuses change streams as mongod does (40573).
     */
    fun open(db: String, cmd: BsonDocument, owner: Int, log: ChangeEventLog, read: (String, String) -> List<BsonDocument>, hello: BsonDocument): BsonDocument {
        if (!hello.containsKey("setName") && hello["msg"] != BsonString("isdbgrid")) {
            return WireServer.error(40573, "Location40573", "The \$changeStream stage is only supported on replica sets")
        }
        val pipeline = cmd.getArray("pipeline")
        val spec = pipeline[0].asDocument().getDocument(STAGE)
        spec.keys.firstOrNull { it !in OPTIONS }?.let { return WireServer.error(40415, "Location40415", "BSON field '\$changeStream.$it' is an unknown field.") }
        val target = cmd["aggregate"]
        val cluster = spec["allChangesForCluster"]?.let { it.isBoolean && it.asBoolean().value } == true
        val scope = when {
            target != null && target.isString -> Scope.Collection(db, target.asString().value)
            cluster && db != "admin" -> return WireServer.error(ErrorCodes.INVALID_OPTIONS, "InvalidOptions", "A \$changeStream with 'allChangesForCluster:true' may only be opened on the 'admin' database")
            cluster -> Scope.Cluster
            else -> Scope.Database(db)
        }
        val starts = listOf("resumeAfter", "startAfter", "startAtOperationTime").filter { spec.containsKey(it) }
        if (starts.size > 1) return WireServer.error(40674, "Location40674", "Only one type of resume option is allowed, but multiple were found.")
        val position = when (starts.firstOrNull()) {
            "resumeAfter", "startAfter" -> {
                val token = spec[starts[0]]?.takeIf { it.isDocument }?.asDocument()
                val at = token?.let { ChangeEventLog.positionOf(it) }
                    ?: return WireServer.error(ErrorCodes.INVALID_RESUME_TOKEN, "InvalidResumeToken", "invalid resume token: ${spec[starts[0]]}")
                if (at.second && starts[0] == "resumeAfter") {
                    return WireServer.error(ErrorCodes.INVALID_RESUME_TOKEN, "InvalidResumeToken", "cannot resume after an invalidate event; use startAfter")
                }
                if (at.first > log.lastPosition) return WireServer.error(ErrorCodes.CHANGE_STREAM_FATAL, "ChangeStreamFatalError", "cannot resume stream; the resume token was not found")
                at.first
            }
            "startAtOperationTime" -> spec["startAtOperationTime"]?.takeIf { it.isTimestamp }?.asTimestamp()?.let(log::positionBefore)
                ?: return WireServer.error(14, "TypeMismatch", "startAtOperationTime must be a Timestamp")
            else -> log.lastPosition
        }
        val stages = try {
            pipeline.drop(1).takeIf { it.isNotEmpty() }?.let { rest ->
                Aggregation.fromPipeline(rest.map { BackendDocuments.toBackend(it.asDocument()) }, null, null, null, NoopOplog.get())
            }
        } catch (e: MongoServerError) {
            return WireServer.error(e.code, e.codeName ?: "Location${e.code}", e.messageWithoutErrorCode)
        } catch (e: MongoServerException) {
            return WireServer.error(ErrorCodes.BAD_VALUE, "BadValue", e.messageWithoutErrorCode)
        }
        val ns = if (scope is Scope.Collection) "$db.${scope.coll}" else "$db.\$cmd.aggregate"
        val stream = Stream(ns, owner, scope, spec, stages, position, log, read)
        val batchSize = (cmd["cursor"] as? BsonDocument)?.get("batchSize")?.takeIf { it.isNumber }?.asNumber()?.intValue() ?: DEFAULT_BATCH
        val batch = try {
            synchronized(stream) { take(stream, batchSize) }
        } catch (e: StreamError) {
            return e.reply
        }
        val id = if (stream.done) 0L else ids.incrementAndGet().also { synchronized(this) { open[it] = stream } }
        return reply("firstBatch", batch, id, stream)
    }

    /** The reply to `getMore` when its cursor is one of these, else null. */
    suspend fun getMore(db: String, cmd: BsonDocument, owner: Int): BsonDocument? {
        val id = cmd["getMore"]?.takeIf { it.isInt64 || it.isInt32 }?.asNumber()?.longValue() ?: return null
        val stream = synchronized(this) { open[id] } ?: return null
        if (stream.owner != owner) return WireServer.error(43, "CursorNotFound", "cursor id $id not found")
        val coll = cmd["collection"]?.takeIf { it.isString }?.asString()?.value
        if (stream.ns != "$db.$coll") return WireServer.error(13, "Unauthorized", "Requested getMore on namespace '$db.$coll', but cursor belongs to a different namespace ${stream.ns}")
        val size = cmd["batchSize"]?.takeIf { it.isNumber }?.asNumber()?.intValue()?.takeIf { it > 0 } ?: Int.MAX_VALUE
        val deadline = System.nanoTime() + (cmd["maxTimeMS"]?.takeIf { it.isNumber }?.asNumber()?.longValue() ?: 1_000L) * 1_000_000
        while (true) {
            val batch = try {
                synchronized(stream) { take(stream, size) }
            } catch (e: StreamError) {
                synchronized(this) { open.remove(id) }
                return e.reply
            }
            if (stream.done) synchronized(this) { open.remove(id) }
            if (batch.isNotEmpty() || stream.done || System.nanoTime() >= deadline) return reply("nextBatch", batch, if (stream.done) 0L else id, stream)
            if (synchronized(this) { open[id] } !== stream) return WireServer.error(43, "CursorNotFound", "cursor id $id not found")
            // polled, never past the getMore's maxTimeMS by more than the clock's grain
            delay(((deadline - System.nanoTime()) / 1_000_000).coerceIn(1, POLL_MS))
        }
    }

    /** The reply to `killCursors` when one of its cursors is one of these (the others reported not found), else null. */
    fun killCursors(db: String, cmd: BsonDocument, owner: Int): BsonDocument? {
        val listed = (cmd["cursors"] as? BsonArray)?.mapNotNull { v -> v.takeIf { it.isNumber }?.asNumber()?.longValue()?.let { it to v } } ?: return null
        val killed = BsonArray()
        val notFound = BsonArray()
        synchronized(this) {
            if (listed.none { (id, _) -> id in open }) return null
            for ((id, v) in listed) {
                val s = open[id]
                if (s != null && s.owner == owner && s.ns.startsWith("$db.")) { open.remove(id); killed.add(v) } else notFound.add(v)
            }
        }
        return BsonDocument("cursorsKilled", killed).append("cursorsNotFound", notFound).append("cursorsAlive", BsonArray())
            .append("cursorsUnknown", BsonArray()).append("ok", BsonInt32(1))
    }

    private class StreamError(val reply: BsonDocument) : RuntimeException(reply.toJson())

    /** Under the stream's lock: up to [max] events after its position (an `invalidate` ends it). */
    private fun take(stream: Stream, max: Int): List<BsonDocument> {
        val out = ArrayList<BsonDocument>()
        val expanded = stream.spec["showExpandedEvents"]?.let { it.isBoolean && it.asBoolean().value } == true
        while (out.size < max && !stream.done) {
            stream.invalidateAt?.let { e ->
                out.add(BsonDocument("_id", ChangeEventLog.token(e.position, invalidate = true)).append("operationType", BsonString("invalidate"))
                    .append("clusterTime", e.clusterTime).append("wallTime", e.event["wallTime"]))
                stream.done = true
                return out
            }
            val entries = stream.log.after(stream.position, SCAN)
            if (entries.isEmpty()) break
            for (e in entries) {
                stream.position = e.position
                if (!inScope(stream.scope, e) || (e.expanded && !expanded)) continue
                val event = rendered(e, stream.spec, stream.read)
                shaped(stream, event)?.let { out.add(it) }
                if (invalidates(stream.scope, e)) {
                    stream.invalidateAt = e
                    break
                }
                if (out.size >= max) break
            }
        }
        return out
    }

    private fun inScope(scope: Scope, e: ChangeEventLog.Entry): Boolean = when (scope) {
        is Scope.Collection -> e.db == scope.db && e.coll == scope.coll
        is Scope.Database -> e.db == scope.db && e.coll?.startsWith("system.") != true
        Scope.Cluster -> e.db !in INTERNAL_DATABASES && e.coll?.startsWith("system.") != true
    }

    private fun invalidates(scope: Scope, e: ChangeEventLog.Entry): Boolean = when (scope) {
        is Scope.Collection -> e.invalidates
        is Scope.Database -> e.coll == null && e.event.getString("operationType").value == "dropDatabase"
        Scope.Cluster -> false
    }

    /** The event of [e] as a stream with [spec] sees it: `_id` first, the images its options ask for. */
    private fun rendered(e: ChangeEventLog.Entry, spec: BsonDocument, read: (String, String) -> List<BsonDocument>): BsonDocument {
        val event = BsonDocument("_id", ChangeEventLog.token(e.position))
        e.event.forEach { (k, v) -> event[k] = v }
        // the fields of the expanded format (MongoDB 6.0+) only with showExpandedEvents
        if (spec["showExpandedEvents"]?.let { it.isBoolean && it.asBoolean().value } != true) {
            event.remove("collectionUUID")
            if (e.event.getString("operationType").value == "rename") event.remove("operationDescription")
            (event["updateDescription"] as? BsonDocument)?.let { event["updateDescription"] = it.clone().apply { remove("disambiguatedPaths") } }
        }
        val type = e.event.getString("operationType").value
        val full = spec["fullDocument"]?.takeIf { it.isString }?.asString()?.value
        if (type == "update") {
            when (full) {
                "updateLookup" -> event["fullDocument"] = e.coll?.let { c -> read(e.db, c).firstOrNull { it["_id"] == e.event.getDocument("documentKey")["_id"] } } ?: BsonNull.VALUE
                "whenAvailable", "required" -> event["fullDocument"] = e.after ?: BsonNull.VALUE
            }
        }
        val before = spec["fullDocumentBeforeChange"]?.takeIf { it.isString }?.asString()?.value
        if (type in setOf("update", "replace", "delete") && (before == "whenAvailable" || before == "required")) event["fullDocumentBeforeChange"] = e.before ?: BsonNull.VALUE
        return event
    }

    /** [event] through the stream's pipeline: null when filtered out; a changed `_id` is fatal (280). */
    private fun shaped(stream: Stream, event: BsonDocument): BsonDocument? {
        val stages = stream.pipeline ?: return event
        val out: List<Document> = try {
            stages.runStages(listOf(BackendDocuments.toBackend(event)).stream())
        } catch (e: MongoServerError) {
            throw StreamError(WireServer.error(e.code, e.codeName ?: "Location${e.code}", e.messageWithoutErrorCode))
        }
        val doc = out.firstOrNull()?.let(BackendDocuments::fromBackend) ?: return null
        if (doc["_id"] != event["_id"]) {
            val reply = WireServer.error(ErrorCodes.CHANGE_STREAM_FATAL, "ChangeStreamFatalError",
                "Encountered an event whose _id field, which contains the resume token, was modified by the pipeline. Modifying the _id field of an event makes it impossible to resume the stream from that point.")
            reply["errorLabels"] = BsonArray(listOf(BsonString("NonResumableChangeStreamError")))
            throw StreamError(reply)
        }
        return doc
    }

    private fun reply(field: String, batch: List<BsonDocument>, id: Long, stream: Stream): BsonDocument {
        val token = ChangeEventLog.token(stream.position, invalidate = stream.done)
        val cursor = BsonDocument(field, BsonArray(batch)).append("postBatchResumeToken", token).append("id", BsonInt64(id)).append("ns", BsonString(stream.ns))
        return BsonDocument("cursor", cursor).append("ok", BsonInt32(1))
    }

    private object ErrorCodes {
        const val BAD_VALUE = 2
        const val INVALID_OPTIONS = 72
        const val INVALID_RESUME_TOKEN = 260
        const val CHANGE_STREAM_FATAL = 280
    }

    companion object {
        private const val STAGE = "\$changeStream"
        private const val DEFAULT_BATCH = 101
        private const val SCAN = 256
        private const val POLL_MS = 10L
        private val INTERNAL_DATABASES = setOf("admin", "local", "config")
        private val OPTIONS = setOf(
            "resumeAfter", "startAfter", "startAtOperationTime", "fullDocument", "fullDocumentBeforeChange", "allChangesForCluster",
            "showExpandedEvents", "showSystemEvents", "allowToRunOnConfigDB", "allowToRunOnSystemNS", "showRawUpdateDescription",
        )

        /** True when [cmd] is an `aggregate` whose pipeline starts with `$changeStream`. */
        fun isChangeStream(cmd: BsonDocument): Boolean = cmd.firstKey == "aggregate" &&
            (cmd["pipeline"] as? BsonArray)?.firstOrNull()?.let { it.isDocument && it.asDocument().containsKey(STAGE) && it.asDocument()[STAGE]!!.isDocument } == true
    }
}
