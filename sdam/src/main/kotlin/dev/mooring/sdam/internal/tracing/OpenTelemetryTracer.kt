package dev.mooring.sdam.internal.tracing

import dev.mooring.cmap.Connection
import dev.mooring.cmap.MongoCommandException
import dev.mooring.cmap.internal.connection.DriverVersion
import dev.mooring.events.EventListener
import io.opentelemetry.api.GlobalOpenTelemetry
import io.opentelemetry.api.trace.Span
import io.opentelemetry.api.trace.SpanBuilder
import io.opentelemetry.api.trace.SpanKind
import io.opentelemetry.api.trace.StatusCode
import io.opentelemetry.api.trace.Tracer
import io.opentelemetry.context.Context
import io.opentelemetry.context.ContextKey
import io.opentelemetry.extension.kotlin.asContextElement
import io.opentelemetry.extension.kotlin.getOpenTelemetryContext
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.withContext
import java.io.PrintWriter
import java.io.StringWriter
import java.util.concurrent.atomic.AtomicBoolean
import kotlin.coroutines.CoroutineContext

/**
 * [OperationTracer] on the OpenTelemetry API (`GlobalOpenTelemetry`, instrumentation scope
 * `dev.mooring` with Mooring's version). The operation span is current in the coroutine context
 * while the operation runs, so command spans and pool events find it even when the operation
 * hops threads. Thread-safe.
 */
internal class OpenTelemetryTracer(private val config: TracingConfig) : OperationTracer {
    private val tracer: Tracer by lazy {
        // open-telemetry.md "Tracer Attributes": the version as the handshake's client.driver.version
        GlobalOpenTelemetry.get().tracerBuilder(SCOPE_NAME).setInstrumentationVersion(DriverVersion.value).build()
    }

    override suspend fun <T> operation(name: String, database: String?, collection: String?, block: suspend () -> T): T {
        val parent = callerContext()
        val summary = summary(name, database, collection)
        val span = tracer.spanBuilder(summary).setParent(parent).setSpanKind(SpanKind.CLIENT)
            .common(database, collection)
            .setAttribute("db.operation.name", name)
            .setAttribute("db.operation.summary", summary)
            .startSpan()
        val operation = OperationTrace(span, System.nanoTime())
        try {
            return withContext(parent.with(span).with(OperationTrace.KEY, operation).asContextElement()) { block() }
        } catch (e: Throwable) {
            if (e is CancellationException) throw e
            if (operation.isSensitiveFailure(e)) recordRedactedError(span, e) else recordError(span, e)
            throw e
        } finally {
            span.end()
        }
    }

    override fun startTransaction(): TransactionSpan {
        val parent = Context.current()
        val span = tracer.spanBuilder("transaction").setParent(parent).setSpanKind(SpanKind.CLIENT)
            .setAttribute("db.system.name", "mongodb") // open-telemetry.md: its only attribute
            .startSpan()
        val ended = AtomicBoolean(false)
        return object : TransactionSpan {
            override val parent: CoroutineContext = parent.with(span).asContextElement()

            override fun end() {
                if (ended.compareAndSet(false, true)) span.end()
            }
        }
    }

    private val recorder = PoolEventRecorder()

    override fun traced(connection: Connection): Connection {
        recorder.checkedOut(connection)
        return TracedConnection(connection, this)
    }

    override val poolListener: EventListener = recorder

    /** Starts the span of one (non-sensitive) command under the current operation span. */
    internal suspend fun commandSpan(connection: Connection, database: String, name: String, command: org.bson.BsonDocument): Span {
        val collection = CommandAttributes.collection(database, command)
        val address = connection.address
        val builder = tracer.spanBuilder(name).setParent(callerContext()).setSpanKind(SpanKind.CLIENT)
            .common(database, collection)
            .setAttribute("db.command.name", name)
            .setAttribute("db.query.summary", summary(name, database, collection))
            .setAttribute("server.address", address.host)
            .setAttribute("network.transport", if (address.isUnixSocket) "unix" else "tcp")
            .setAttribute("db.mongodb.driver_connection_id", connection.id)
        if (!address.isUnixSocket) builder.setAttribute("server.port", address.port.toLong())
        connection.description?.serverConnectionId?.let { builder.setAttribute("db.mongodb.server_connection_id", it) }
        CommandAttributes.cursorId(command)?.let { builder.setAttribute("db.mongodb.cursor_id", it) }
        CommandAttributes.lsid(command)?.let { builder.setAttribute("db.mongodb.lsid", it) }
        CommandAttributes.txnNumber(command)?.let { builder.setAttribute("db.mongodb.txn_number", it) }
        if (config.queryTextMaxLength > 0) builder.setAttribute("db.query.text", CommandAttributes.queryText(command, config.queryTextMaxLength))
        return builder.startSpan()
    }

    /**
     * Records [e] on [span]: the exception attributes, the exception event, status ERROR, and the
     * server's code when it sent one (`db.response.status_code`); on a command span also
     * `error.type` (semantic conventions for database spans: the status code, else the exception's class).
     */
    internal fun recordError(span: Span, e: Throwable, commandSpan: Boolean = false) {
        span.setAttribute("exception.type", e.javaClass.name)
        e.message?.let { span.setAttribute("exception.message", it) }
        span.setAttribute("exception.stacktrace", StringWriter().also { e.printStackTrace(PrintWriter(it)) }.toString())
        val code = (e as? MongoCommandException)?.code?.toString()
        code?.let { span.setAttribute("db.response.status_code", it) }
        if (commandSpan) span.setAttribute("error.type", code ?: e.javaClass.name)
        span.recordException(e)
        span.setStatus(StatusCode.ERROR, e.message ?: e.javaClass.simpleName)
    }

    /**
     * Records the failure of a security-sensitive command (open-telemetry.md "Security
     * Implication": as command monitoring redacts it) on the operation [span]: the exception's
     * type and the server's code only, no message, stack trace or exception event.
     */
    private fun recordRedactedError(span: Span, e: Throwable) {
        span.setAttribute("exception.type", e.javaClass.name)
        (e as? MongoCommandException)?.let { span.setAttribute("db.response.status_code", it.code.toString()) }
        span.setStatus(StatusCode.ERROR, e.javaClass.name)
    }

    /** The operation running in the calling coroutine, or null (a command outside any operation span). */
    internal suspend fun currentOperation(): OperationTrace? = callerContext().get(OperationTrace.KEY)

    /** The caller's context: the coroutine context's OpenTelemetry context, else the thread's current one. */
    private suspend fun callerContext(): Context {
        val fromCoroutine = currentCoroutineContext().getOpenTelemetryContext()
        return if (fromCoroutine != Context.root()) fromCoroutine else Context.current()
    }

    private fun SpanBuilder.common(database: String?, collection: String?): SpanBuilder = apply {
        setAttribute("db.system.name", "mongodb")
        database?.let { setAttribute("db.namespace", it) }
        collection?.let { setAttribute("db.collection.name", it) }
    }

    private fun summary(name: String, database: String?, collection: String?): String = when {
        database == null -> name
        collection == null -> "$name $database"
        else -> "$name $database.$collection"
    }

    /** What the pool-event recorder needs of the running operation. */
    internal class OperationTrace(val span: Span, startNanos: Long) {
        /**
         * When the running attempt's server selection started: the operation's start, then the end
         * of the last command or failed checkout (a retry selects again after its attempt failed).
         */
        @Volatile
        var selectionStartNanos: Long = startNanos

        /** When the running attempt's checkout started; null between attempts. */
        @Volatile
        var checkoutStartNanos: Long? = null

        /** The last failure of a security-sensitive command of this operation (recorded redacted if the operation fails with it). */
        @Volatile
        var sensitiveFailure: Throwable? = null

        /** [e] is (or was caused by) the failure of a sensitive command of this operation. */
        fun isSensitiveFailure(e: Throwable): Boolean {
            val failure = sensitiveFailure ?: return false
            return generateSequence(e) { it.cause }.take(8).any { it === failure } || e.suppressed.any { it === failure }
        }

        companion object {
            val KEY: ContextKey<OperationTrace> = ContextKey.named("dev.mooring.operation")
        }
    }

    internal companion object {
        const val SCOPE_NAME: String = "dev.mooring"
    }
}
