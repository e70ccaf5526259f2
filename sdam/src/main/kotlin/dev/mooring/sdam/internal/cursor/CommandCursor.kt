package dev.mooring.sdam.internal.cursor

import dev.mooring.cmap.ConnectionPurpose
import dev.mooring.cmap.Connection
import dev.mooring.cmap.MongoNetworkException
import dev.mooring.sdam.CursorType
import dev.mooring.sdam.RunCursorCommandOptions
import dev.mooring.sdam.ServerDescription
import dev.mooring.sdam.ReadPreference
import dev.mooring.sdam.ServerSelectionOperation
import dev.mooring.sdam.TopologyType
import dev.mooring.sdam.WireVersions
import dev.mooring.sdam.internal.csot.OperationTimeout
import dev.mooring.sdam.internal.session.OperationSession
import dev.mooring.sdam.internal.topology.ConnectionPin
import dev.mooring.sdam.internal.topology.OperationRetry
import dev.mooring.sdam.internal.topology.AttemptReply
import dev.mooring.sdam.internal.topology.ReadPreferenceCommand
import dev.mooring.sdam.internal.tracing.traceCommand
import dev.mooring.sdam.internal.retry.OverloadRetry
import dev.mooring.sdam.internal.operation.RawDataField
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.delay
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeoutOrNull
import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonInt64
import org.bson.BsonString
import org.bson.BsonTimestamp

/**
 * One server-side cursor (run-command.md "RunCursorCommand"): [open] runs the cursor-opening
 * [command] on a server selected by the options' read preference (retried as [retry] allows); [getMore] continues it on
 * that server, in load-balanced mode on the very connection that opened it (pinned until the
 * cursor is exhausted or closed; in a transaction, the transaction's pinned connection, which
 * the transaction releases), with the same `lsid`; [close] sends killCursors for a cursor
 * still open on the server (bounded, errors ignored; not after a network error on a pinned
 * connection) and returns the connection and the implicit session.
 *
 * Not thread-safe: one coroutine iterates a cursor (the flow that owns it).
 */
internal class CommandCursor(
    private val context: CursorContext,
    private val database: String,
    private val command: BsonDocument,
    private val options: RunCursorCommandOptions,
    private val retry: OperationRetry,
    private val session: OperationSession,
    private val timeout: CursorTimeout,
    /** The find helper's positive `limit`, or null: the documents to return at most. */
    private val limit: Int? = null,
) {
    private val operation = context.newOperation()
    private var route: CursorRoute? = null
    private var id = 0L
    private var ns = ""
    private var pinnedNetworkError = false
    private var returned = 0
    /** True when the last getMore returned no document: the next getMore continues the same `next` (its timeout). */
    private var lastGetMoreEmpty = false

    /** The `postBatchResumeToken` of the latest batch (a change stream's), or null. */
    var postBatchResumeToken: BsonDocument? = null
        private set

    /** The `operationTime` of the opening command's reply, or null. */
    var operationTime: BsonTimestamp? = null
        private set

    /** The maxWireVersion of the connection of the latest command sent (the opening command or a getMore), 0 before any. */
    var wireVersion: Int = 0
        private set

    /** What is left of the current `next`'s timeout (ITERATION mode), or null (see [CursorTimeout.iterationRemainingMS]). */
    fun iterationRemainingMS(): Long? = timeout.iterationRemainingMS()

    /** The documents still to return under [limit] (null: no limit). */
    private val leftUnderLimit: Int? get() = limit?.let { it - returned }

    /**
     * True when no getMore follows: the server holds no more results (after [open], a drained
     * getMore or [close]), or [limit] documents were returned ([close] then kills a cursor still open).
     */
    val exhausted: Boolean get() = id == 0L || (leftUnderLimit ?: 1) <= 0

    /** Runs the opening command; returns the first batch. */
    suspend fun open(): List<BsonDocument> {
        // in a transaction (load-balanced mode) the cursor shares the transaction's connection, which the transaction releases
        val pin = session.transactionPin ?: ConnectionPin()
        // in a transaction: the transaction's selection and read preference, no retry but server overload's
        val selection = session.transactionSelection(write = false) ?: ServerSelectionOperation.Read(options.readPreference)
        val readPreference = if (session.inTransaction) ReadPreference.PRIMARY else options.readPreference
        val attempts = if (session.inTransaction) OperationRetry.withOverloadRetries(OperationRetry.NONE, retry.retriesOverload) else retry
        val name = command.firstKey
        // OpenTelemetry: the opening command runs in an operation span named after it (find, aggregate, ...)
        return try { context.tracer.traceCommand(database, command, null, session.transactionSpan) {
            withContext(pin) {
                // the reply goes to the runner as a command reply: its writeConcernError ($out/$merge) reaches SDAM error handling
                context.runner.run(selection, name, timeout.timeoutMS, attempts, OPENED_REPLY, mayRunOnLoops = true) { selected, connection ->
                    wireVersion = connection.description?.maxWireVersion ?: selected.description.maxWireVersion
                    val sent = ReadPreferenceCommand.withReadPreference(session.attach(RawDataField.forConnection(command, connection, wireVersion), connection), readPreference, selected.topology.type, selected.description)
                    val reply = send(connection, database, timeout.initial) { timeout.initialCommand(sent, selected.description) }
                    val batch = CursorBatch.first(name, reply, connection.address)
                    id = batch.id
                    ns = batch.ns
                    returned = batch.documents.size
                    postBatchResumeToken = batch.postBatchResumeToken
                    operationTime = reply["operationTime"]?.takeIf { it.isTimestamp }?.asTimestamp()
                    route = if (batch.id != 0L && selected.topology.type == TopologyType.LOAD_BALANCED) {
                        if (!pin.transaction) {
                            pin.pin(connection, selected.pool)
                            selected.pool.pin(connection, ConnectionPurpose.CURSOR)
                        } // a transaction's pin holds its connection already, or takes this one, its first, when the attempt ends
                        CursorRoute.Pinned(connection.address, pin)
                    } else {
                        CursorRoute.OnServer(connection.address)
                    }
                    if (batch.id == 0L) session.release()
                    Opened(reply, batch.documents)
                }
            }
        }.documents } catch (e: Throwable) {
            throw session.failed(e)
        }
    }

    /** The opening command's [reply] and its first batch's [documents]. */
    private class Opened(val reply: BsonDocument, val documents: List<BsonDocument>)

    private companion object {
        val OPENED_REPLY = AttemptReply<Opened> { it.reply }
    }

    /**
     * Fetches the next batch (possibly empty for a tailable cursor); releases the pin and the session when the cursor is
     * drained. A caller running under [GetMoreDemand] (the Java facade's publishers) is held here until it has demand:
     * every cursor's getMore, a change stream's included, waits for it in this one place.
     */
    suspend fun getMore(): List<BsonDocument> {
        val r = checkNotNull(route) { "the cursor is not open" }
        check(!exhausted) { "the cursor is exhausted" }
        currentCoroutineContext()[GetMoreDemand]?.await()
        val getMore = BsonDocument("getMore", BsonInt64(id)).append("collection", BsonString(ns.substringAfter('.')))
        listOfNotNull(options.batchSize, leftUnderLimit).minOrNull()?.let { getMore["batchSize"] = BsonInt32(it) }
        val reply = timeout.getMore(continuesNext = lastGetMoreEmpty) { t ->
            // client-side-operations-timeout.md: no maxTimeMS on a getMore but a tailable-await cursor's await time
            options.maxTimeMS?.let { getMore["maxTimeMS"] = BsonInt64(if (options.cursorType == CursorType.TAILABLE_AWAIT) t.awaitTimeMS(it, server(r)) else it) }
            // OpenTelemetry: each getMore is an operation span of its own (with its command span inside)
            context.tracer.traceCommand(ns.substringBefore('.'), getMore, null, session.transactionSpan) {
                overloadRetried {
                    context.connections.run(r) { c ->
                        // crud.md: the comment goes with getMores on 4.4+ (wire version 9) only; older servers refuse it there
                        wireVersion = c.description?.maxWireVersion ?: 0
                        if (wireVersion >= WireVersions.MONGODB_4_4) options.comment?.let { getMore["comment"] = it }
                        send(c, ns.substringBefore('.'), t) { session.attach(getMore, c) }
                    }
                }
            }
        }
        val batch = CursorBatch.next(reply, id, ns, r.address)
        id = batch.id
        returned += batch.documents.size
        postBatchResumeToken = batch.postBatchResumeToken
        lastGetMoreEmpty = batch.documents.isEmpty()
        if (id == 0L) finish(r)
        return batch.documents
    }

    /**
     * Ends the cursor: killCursors when it is still open on the server (on its route, within the
     * close bound: [timeoutMS] when given for the close, else the cursor's timeoutMS refreshed; its
     * outcome ignored), then returns the pinned connection and the implicit session. Idempotent.
     * Call it in a non-cancellable context.
     */
    suspend fun close(timeoutMS: Long? = null) {
        val r = route
        if (r != null && id != 0L && !pinnedNetworkError) {
            val kill = BsonDocument("killCursors", BsonString(ns.substringAfter('.'))).append("cursors", BsonArray(listOf(BsonInt64(id))))
            try {
                // client-side-operations-timeout.md: the close's own timeoutMS, else the cursor's refreshed
                val t = timeout.forClose(timeoutMS)
                withTimeoutOrNull(timeout.closeBoundMS(timeoutMS)) {
                    // OpenTelemetry: killCursors is an operation span of its own (with its command span inside)
                    context.tracer.traceCommand(ns.substringBefore('.'), kill, null, session.transactionSpan) {
                        context.connections.run(r) { c -> send(c, ns.substringBefore('.'), t) { t.withMaxTimeMS(session.attach(kill, c), server(r)) } }
                    }
                }
            } catch (e: Exception) {
                // run-command.md: the outcome of killCursors is ignored
            }
        }
        id = 0L
        if (r != null) finish(r) else session.release()
    }

    /**
     * client-backpressure.md: a getMore (a read) that fails with a retryable overload error is
     * retried on the cursor's own route when retryReads is on, at most maxAdaptiveRetries times,
     * each after the overload policy's backoff (bounded with the rest by the cursor's timeout).
     */
    private suspend fun <T> overloadRetried(block: suspend () -> T): T {
        var retries = 0
        while (true) {
            try {
                return block()
            } catch (e: Throwable) {
                if (e is CancellationException) throw e
                val policy = context.runner.overloadPolicy
                if (!context.topology.settings.retryReads || !OverloadRetry.isRetryableOverload(e) || retries >= policy.maxRetries) throw e
                retries++
                delay(policy.backoffMillis(retries, e))
            }
        }
    }

    private suspend fun finish(r: CursorRoute) {
        if (r is CursorRoute.Pinned && !r.pin.transaction) r.pin.release() // a transaction's pin is its transaction's to release
        session.release()
    }

    /** The description of the cursor's server now (for its minimum round trip time), or null when it left the topology. */
    private fun server(r: CursorRoute): ServerDescription? = context.topology.current.servers[r.address]

    /**
     * Sends the command [build] makes (a timeout error, nothing sent, when no time is left) and
     * returns the reply, checked and its errors translated by [timeout] as runCommand's are.
     */
    private suspend fun send(connection: Connection, db: String, timeout: OperationTimeout, build: () -> BsonDocument): BsonDocument =
        try {
            timeout.checkReply(context.monitored(connection, operation, session, timeout).command(db, build()))
        } catch (e: Throwable) {
            session.onError(e)
            // load-balancers.md: after a network error (or a command cut off in flight, which closes the connection) the pinned connection is no longer valid
            if (route is CursorRoute.Pinned && (e is MongoNetworkException || connection.isClosed)) pinnedNetworkError = true
            throw timeout.translate(e)
        }
}
