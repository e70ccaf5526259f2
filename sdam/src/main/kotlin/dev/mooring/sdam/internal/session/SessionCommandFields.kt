package dev.mooring.sdam.internal.session

import dev.mooring.cmap.Connection
import dev.mooring.sdam.TransactionState
import org.bson.BsonBoolean
import org.bson.BsonDocument
import org.bson.BsonInt64
import org.bson.BsonString
import org.bson.BsonTimestamp

/**
 * Internal API, not stable: the one home of the fields an explicit session adds to a command
 * (after its `lsid`), pure but for the transaction's state moves:
 *
 * - in a transaction (transactions.md "Behavior of commands in a transaction"): `txnNumber` and
 *   `autocommit: false` on every command; on the first also `startTransaction: true` and the
 *   transaction's `readConcern` (with `afterClusterTime` in a causally consistent session that
 *   saw an operation time); every other `readConcern`, and every `writeConcern` but
 *   commitTransaction's and abortTransaction's, removed (the transaction's own apply). The
 *   first command sent moves the transaction to in progress, and on a mongos pins it there.
 * - outside one, for a read that takes a read concern ([READS]): in a snapshot session
 *   `readConcern: {level: "snapshot", atClusterTime}` (once the snapshot time is known); in a
 *   causally consistent one `afterClusterTime` (causal-consistency.md), the level kept.
 */
internal object SessionCommandFields {
    /** The commands that take a read concern and get afterClusterTime / a snapshot (causal-consistency.md, driver-sessions.md). */
    val READS: Set<String> = setOf("find", "aggregate", "count", "distinct", "mapReduce", "geoNear")

    /** The commands that end a transaction: sent with its fields and their own writeConcern. */
    val ENDS: Set<String> = setOf("commitTransaction", "abortTransaction")

    /** [command] (with its `lsid`) as [transaction] and the session's clock and options have it sent over [connection]. */
    fun apply(command: BsonDocument, transaction: Transaction, clock: SessionClock, causal: Boolean, snapshot: Boolean, connection: Connection): BsonDocument {
        val name = command.firstKey
        if (transaction.isActive || (name in ENDS && transaction.state != TransactionState.None)) {
            return inTransaction(command, name, transaction, clock, causal, connection)
        }
        if (name !in READS) return command
        return when {
            snapshot -> withReadConcern(command, BsonDocument("level", BsonString("snapshot")), clock.snapshotTime?.let { "atClusterTime" to it })
            causal -> clock.operationTime?.let { t ->
                withReadConcern(command, (command["readConcern"] as? BsonDocument)?.clone() ?: BsonDocument(), "afterClusterTime" to t)
            } ?: command
            else -> command
        }
    }

    private fun inTransaction(command: BsonDocument, name: String, txn: Transaction, clock: SessionClock, causal: Boolean, connection: Connection): BsonDocument {
        val sent = BsonDocument()
        val end = name in ENDS
        for ((k, v) in command) if (k != "readConcern" && (end || k != "writeConcern")) sent[k] = v
        sent["txnNumber"] = BsonInt64(txn.txnNumber)
        if (txn.state == TransactionState.Starting) {
            sent["startTransaction"] = BsonBoolean.TRUE
            val rc = BsonDocument()
            txn.options.readConcernLevel?.let { rc["level"] = BsonString(it) }
            if (causal) clock.operationTime?.let { rc["afterClusterTime"] = it }
            if (rc.isNotEmpty()) sent["readConcern"] = rc
            txn.sent()
            if (isMongos(connection)) txn.pinned = connection.address
        }
        sent["autocommit"] = BsonBoolean.FALSE
        return sent
    }

    private fun withReadConcern(command: BsonDocument, readConcern: BsonDocument, extra: Pair<String, BsonTimestamp>?): BsonDocument {
        extra?.let { readConcern[it.first] = it.second }
        val sent = BsonDocument()
        for ((k, v) in command) if (k != "readConcern") sent[k] = v
        sent["readConcern"] = readConcern
        return sent
    }

    /** True when [connection] is to a mongos (its hello said `msg: "isdbgrid"`). */
    fun isMongos(connection: Connection): Boolean =
        connection.description?.helloReply?.get("msg")?.let { it.isString && it.asString().value == "isdbgrid" } == true
}
