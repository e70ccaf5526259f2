package dev.mooring.spec.unified

import dev.mooring.driver.ChangeStream
import dev.mooring.driver.ChangeStreamCursor
import dev.mooring.driver.ChangeStreamOptions
import dev.mooring.driver.database
import dev.mooring.driver.watch
import dev.mooring.sdam.ClientSession
import kotlinx.serialization.json.JsonObject
import org.bson.BsonDocument
import org.bson.BsonNull
import org.bson.BsonValue

/**
 * The change stream operations of the unified format through the driver's public API:
 * `createChangeStream` on a client (`MongoCluster.watch`), database or collection entity (its
 * entity options and the operation's `timeoutMS` applied) opens the stream with
 * [ChangeStream.cursor] (the `aggregate` runs there, as the format expects) and saves it as a
 * change stream entity; `iterateUntilDocumentOrError` ([ChangeStreamCursor.next]), `iterateOnce`
 * ([ChangeStreamCursor.tryNext], at most one getMore) and `close` on it. The events are compared
 * as the server sent them ([dev.mooring.driver.ChangeStreamDocument.raw]). One instance per test
 * run; used from its coroutine.
 */
class ChangeStreamOperations {
    private val crud = DriverCrud()
    private val streams = HashMap<String, ChangeStreamCursor<BsonDocument>>()

    /** True when [id] names a change stream entity. */
    fun isChangeStream(id: String): Boolean = id in streams

    /** `createChangeStream` with [args] on [t] ([onClient]: a client entity's); saved as [saveAs] when given (else closed). */
    suspend fun create(t: CrudTarget, onClient: Boolean, args: JsonObject, session: ClientSession?, saveAs: String?): BsonValue? {
        val a = CrudOperations.Args(args)
        val pipeline = a.optional("pipeline")?.asArray()?.map { it.asDocument() } ?: emptyList()
        val options = ChangeStreamOptions(
            fullDocument = a.optional("fullDocument")?.asString()?.value,
            fullDocumentBeforeChange = a.optional("fullDocumentBeforeChange")?.asString()?.value,
            resumeAfter = a.optional("resumeAfter")?.asDocument(),
            startAfter = a.optional("startAfter")?.asDocument(),
            startAtOperationTime = a.optional("startAtOperationTime")?.asTimestamp(),
            showExpandedEvents = a.optional("showExpandedEvents")?.asBoolean()?.value,
            batchSize = a.optional("batchSize")?.asNumber()?.intValue(),
            maxAwaitTimeMS = a.optional("maxAwaitTimeMS")?.asNumber()?.longValue(),
            comment = a.optional("comment"),
            collation = a.optional("collation")?.asDocument(),
        )
        val timeoutMS = a.optional("timeoutMS")?.asNumber()?.longValue() ?: t.options.timeoutMS
        val stream: ChangeStream<BsonDocument> = when {
            t.collection != null -> crud.collection(t).let { c -> timeoutMS?.let { c.withTimeout(it) } ?: c }.watch(pipeline, options, session)
            onClient -> t.cluster.watch(pipeline, options, session, timeoutMS)
            else -> {
                var db = t.cluster.database(t.database)
                t.options.readPreference?.let { db = db.withReadPreference(it) }
                t.options.readConcern?.let { db = db.withReadConcern(DriverOptions.readConcern(it)) }
                timeoutMS?.let { db = db.withTimeout(it) }
                db.watch(pipeline, options, session)
            }
        }
        val cursor = stream.cursor()
        if (saveAs != null) streams[saveAs] = cursor else cursor.close()
        return null
    }

    /** `iterateUntilDocumentOrError` or `iterateOnce` on the change stream [id]: the event as received, or null. */
    suspend fun iterate(name: String, id: String): BsonValue? {
        val cursor = streams.getValue(id)
        return when (name) {
            "iterateUntilDocumentOrError" -> cursor.next()?.raw ?: throw IllegalStateException("change stream $id ended (invalidated)")
            else -> cursor.tryNext()?.raw ?: BsonNull.VALUE
        }
    }

    /** `close` on the change stream [id]. */
    suspend fun close(id: String) {
        streams.remove(id)?.close()
    }

    /** Closes every change stream still open (at the end of a test). */
    suspend fun closeAll() {
        streams.values.forEach { it.close() }
        streams.clear()
    }
}
