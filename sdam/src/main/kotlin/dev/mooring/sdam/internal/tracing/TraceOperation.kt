package dev.mooring.sdam.internal.tracing

import kotlinx.coroutines.withContext
import org.bson.BsonDocument
import org.bson.conversions.Bson

/**
 * Runs [block] as the operation [name] on [database] (no collection): inside an operation span
 * when this tracer exists, else directly (inline: nothing is allocated when tracing is off).
 */
internal suspend inline fun <T> OperationTracer?.trace(name: String, database: String?, transaction: TransactionSpan? = null, crossinline block: suspend () -> T): T =
    if (this == null) block() else inTransactionSpan(transaction) { operation(name, database, null) { block() } }

/**
 * Runs [block] under the [transaction] span of the operation's session, when it has one (open-telemetry.md
 * "Transactions": the transaction's operations are nested in it), else as it is.
 */
internal suspend inline fun <T> inTransactionSpan(transaction: TransactionSpan?, crossinline block: suspend () -> T): T {
    val span = transaction ?: return block()
    return withContext(span.parent) { block() }
}

/**
 * Runs [block] as the operation named after [command] (a retryable read or write) on
 * [database] and the command's collection; directly when there is no tracer.
 */
internal suspend inline fun <T> OperationTracer?.traceCommand(database: String, command: Bson, crossinline block: suspend () -> T): T =
    traceCommand(database, command, null, null, block)

/**
 * Runs [block] as the operation [operationName] (null: named after [command], as a retryable
 * read or write is) on [database] and the command's collection, under its session's [transaction]
 * span when it has one; directly when there is no tracer.
 */
internal suspend inline fun <T> OperationTracer?.traceCommand(
    database: String,
    command: Bson,
    operationName: String?,
    transaction: TransactionSpan?,
    crossinline block: suspend () -> T,
): T {
    if (this == null) return block()
    val doc = command as? BsonDocument ?: command.toBsonDocument()
    val name = operationName ?: doc.keys.firstOrNull() ?: return block() // an empty command fails its own validation inside block
    return inTransactionSpan(transaction) { operation(name, database, CommandAttributes.collection(database, doc)) { block() } }
}
