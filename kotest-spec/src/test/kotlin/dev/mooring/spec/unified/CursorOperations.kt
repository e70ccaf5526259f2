package dev.mooring.spec.unified

import dev.mooring.sdam.ClientSession
import dev.mooring.sdam.CursorType
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.ReadPreference
import dev.mooring.sdam.RunCursorCommandOptions
import dev.mooring.sdam.TimeoutMode
import dev.mooring.sdam.internal.cursor.CursorPage
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.flow.toList
import kotlinx.serialization.json.JsonObject
import org.bson.BsonArray
import org.bson.BsonBoolean
import org.bson.BsonDocument
import org.bson.BsonString
import org.bson.BsonValue

/**
 * The cursor operations of the unified format (unified-test-format.md): `runCursorCommand`
 * (every document), `createCommandCursor` and `createFindCursor` (a [UnifiedCursor] entity),
 * `iterateUntilDocumentOrError`, `iterateOnce` and `close` on a cursor entity, and
 * `assertNumberConnectionsCheckedOut`. One instance per test run; used from its coroutine.
 */
class CursorOperations(private val scope: CoroutineScope) {
    private val cursors = HashMap<String, UnifiedCursor>()

    /** True when [id] names a cursor entity. */
    fun isCursor(id: String): Boolean = id in cursors

    /**
     * Runs the cursor operation [name] with [args] on [target] (a database or collection for the
     * creating operations, a cursor entity otherwise); [session] is the `session` argument's entity,
     * [saveAs] the operation's `saveResultAsEntity` (the name of a created cursor).
     */
    suspend fun execute(name: String, target: CrudTarget?, cursorId: String, args: JsonObject, session: ClientSession?, saveAs: String?): BsonValue? {
        val a = CrudOperations.Args(args)
        return when (name) {
            "runCursorCommand" -> BsonArray(pages(target!!, a.doc("command"), a, session).toList().flatMap { it.documents })
            "createCommandCursor" -> open(saveAs, UnifiedCursor(scope, pages(target!!, a.doc("command"), a, session)))
            // DRIVER-PENDING: the driver's find is a Flow of documents, with no batch-level step: iterateOnce's "at most one
            // getMore" (tryNext) and a cursor opened before its first document is asked for cannot be expressed on it
            "createFindCursor" -> {
                val find = BsonDocument("find", BsonString(target!!.collection!!)).append("filter", a.optional("filter") ?: BsonDocument())
                a.copy(find, "sort", "projection", "skip", "limit", "batchSize", "comment", "hint", "maxTimeMS", "collation")
                val cursorType = cursorType(a)
                flagCursorType(find, cursorType)
                val options = RunCursorCommandOptions(
                    readPreference = target.options.readPreference ?: ReadPreference.PRIMARY, batchSize = positive(a.optional("batchSize")), session = session,
                    timeoutMS = a.optional("timeoutMS")?.asNumber()?.longValue() ?: target.options.timeoutMS,
                    timeoutMode = timeoutMode(a), cursorType = cursorType, maxTimeMS = a.optional("maxAwaitTimeMS")?.asNumber()?.longValue(),
                )
                open(saveAs, UnifiedCursor(scope, CursorPage.pages(target.cluster, target.database, find, options, retryableRead = true, limit = positive(a.optional("limit")))))
            }
            "iterateUntilDocumentOrError" -> cursors.getValue(cursorId).next() ?: throw IllegalStateException("cursor $cursorId is exhausted")
            "iterateOnce" -> cursors.getValue(cursorId).tryNext()
            // unified-test-format.md: close takes the operation's timeoutMS (client-side-operations-timeout.md: a close MUST honour it)
            "close" -> cursors.getValue(cursorId).close(a.optional("timeoutMS")?.asNumber()?.longValue()).let { null }
            else -> throw UnsupportedOperationException("cursor operation $name")
        }
    }

    /** `assertNumberConnectionsCheckedOut`: the connections [cluster]'s pools have checked out now. */
    fun connectionsCheckedOut(cluster: MongoCluster): Int = cluster.poolStatistics().values.sumOf { it.inUseConnections }

    /** Closes every cursor still open (at the end of a test). */
    suspend fun closeAll() {
        cursors.values.forEach { it.close() }
    }

    private suspend fun open(saveAs: String?, cursor: UnifiedCursor): BsonValue? {
        try {
            cursor.opened()
        } catch (e: Throwable) {
            cursor.close()
            throw e
        }
        if (saveAs != null) cursors[saveAs] = cursor else cursor.close()
        return null
    }

    private fun pages(t: CrudTarget, command: BsonDocument, a: CrudOperations.Args, session: ClientSession?) = CursorPage.pages(
        t.cluster, t.database, command,
        RunCursorCommandOptions(
            readPreference = t.options.readPreference ?: ReadPreference.PRIMARY,
            session = session,
            timeoutMS = a.optional("timeoutMS")?.asNumber()?.longValue() ?: t.options.timeoutMS,
            timeoutMode = timeoutMode(a),
            cursorType = cursorType(a),
            batchSize = positive(a.optional("batchSize")),
            maxTimeMS = a.optional("maxTimeMS")?.asNumber()?.longValue(),
            comment = a.optional("comment"),
        ),
    )

    private fun positive(v: BsonValue?): Int? = v?.takeIf { it.isNumber }?.asNumber()?.intValue()?.takeIf { it > 0 }

    companion object {
        /** The operations [execute] runs. */
        val OPERATIONS: Set<String> = setOf("runCursorCommand", "createCommandCursor", "createFindCursor", "iterateUntilDocumentOrError", "iterateOnce")

        /** The `timeoutMode` argument (`cursorLifetime`, `iteration`), null when absent; the library checks it against timeoutMS. */
        fun timeoutMode(a: CrudOperations.Args): TimeoutMode? = a.optional("timeoutMode")?.asString()?.value?.let {
            when (it) {
                "iteration" -> TimeoutMode.ITERATION
                "cursorLifetime" -> TimeoutMode.CURSOR_LIFETIME
                else -> throw IllegalArgumentException("unknown timeoutMode $it")
            }
        }

        /** The `cursorType` argument (`nonTailable`, `tailable`, `tailableAwait`). */
        fun cursorType(a: CrudOperations.Args): CursorType = when (val v = a.optional("cursorType")?.asString()?.value) {
            null, "nonTailable" -> CursorType.NON_TAILABLE
            "tailable" -> CursorType.TAILABLE
            "tailableAwait" -> CursorType.TAILABLE_AWAIT
            else -> throw IllegalArgumentException("unknown cursorType $v")
        }

        /** Sets the find command's `tailable` / `awaitData` flags for [cursorType] (crud.md). */
        fun flagCursorType(find: BsonDocument, cursorType: CursorType) {
            if (cursorType != CursorType.NON_TAILABLE) find["tailable"] = BsonBoolean.TRUE
            if (cursorType == CursorType.TAILABLE_AWAIT) find["awaitData"] = BsonBoolean.TRUE
        }
    }
}
