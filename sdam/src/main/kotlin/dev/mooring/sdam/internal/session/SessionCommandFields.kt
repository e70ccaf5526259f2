package dev.mooring.sdam.internal.session

import dev.mooring.cmap.Connection
import dev.mooring.sdam.MongoTransactionStateException
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
 * - outside one: in a snapshot session every command but a cursor's continuation
 *   ([NO_READ_CONCERN]) `readConcern: {level: "snapshot", atClusterTime}` (atClusterTime once the
 *   snapshot time is known; the server refuses it for anything but find, aggregate and
 *   distinct; before MongoDB 5.0 the driver refuses it); for
 *   the reads and writes that take `afterClusterTime` ([CAUSAL], read-write-concern.md
 *   "afterClusterTime") in a causally consistent session `afterClusterTime` (causal-consistency.md),
 *   the level kept, but not for the generic `runCommand` ([apply]'s `generic`: causal-consistency.md
 *   "commands that are run using runCommand MUST NOT have an afterClusterTime field added"). A
 *   transaction's first command gets it even through runCommand (transactions.md "Causal
 *   Consistency with RunCommand helper").
 */
internal object SessionCommandFields {
    /** The commands that take a read concern and get afterClusterTime / a snapshot (causal-consistency.md, driver-sessions.md). */
    val READS: Set<String> = setOf("find", "aggregate", "count", "distinct", "mapReduce", "geoNear")

    /** The commands that take `afterClusterTime` in a causally consistent session (read-write-concern.md "afterClusterTime"). */
    val CAUSAL: Set<String> = READS + setOf(
        "parallelCollectionScan", "geoSearch", "insert", "update", "findAndModify", "delete", "bulkWrite", "create", "createIndexes",
        "drop", "dropDatabase", "dropIndexes",
    )

    /** Commands a snapshot session sends as they are: a cursor's continuation and the session's own housekeeping. */
    private val NO_READ_CONCERN: Set<String> = setOf("getMore", "killCursors", "endSessions")

    /** MongoDB 5.0, the first server with snapshot reads outside transactions (driver-sessions.md). */
    private const val SNAPSHOT_WIRE_VERSION = 13

    /** The commands that end a transaction: sent with its fields and their own writeConcern. */
    val ENDS: Set<String> = setOf("commitTransaction", "abortTransaction")

    /** [command] (with its `lsid`) as [transaction] and the session's clock and options have it sent over [connection]. */
    fun apply(
        command: BsonDocument,
        transaction: Transaction,
        clock: SessionClock,
        causal: Boolean,
        snapshot: Boolean,
        connection: Connection,
        generic: Boolean = false,
    ): BsonDocument {
        val name = command.firstKey
        if (transaction.isActive || (name in ENDS && transaction.state != TransactionState.None)) {
            return inTransaction(command, name, transaction, clock, causal, connection)
        }
        val snapshotted = snapshot && name !in NO_READ_CONCERN
        if (snapshotted && (connection.description?.maxWireVersion ?: SNAPSHOT_WIRE_VERSION) < SNAPSHOT_WIRE_VERSION) {
            throw MongoTransactionStateException("Snapshot reads require MongoDB 5.0 or later")
        }
        return when {
            snapshotted -> withReadConcern(command, BsonDocument("level", BsonString("snapshot")), clock.snapshotTime?.let { "atClusterTime" to it })
            causal && !generic && name in CAUSAL && !unacknowledged(command) -> clock.operationTime?.let { t ->
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
            // a mongos behind a load balancer (serviceId) is reached by the load balancer's address: the transaction pins its connection instead
            if (isMongos(connection) && connection.description?.serviceId == null) txn.pinned = connection.address
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

    /** True for a `w: 0` write (causal-consistency.md: an unacknowledged write is not causally consistent). */
    private fun unacknowledged(command: BsonDocument): Boolean =
        (command["writeConcern"] as? BsonDocument)?.get("w")?.let { it.isNumber && it.asNumber().intValue() == 0 } == true

    /** True when [connection] is to a mongos (its hello said `msg: "isdbgrid"`). */
    fun isMongos(connection: Connection): Boolean =
        connection.description?.helloReply?.get("msg")?.let { it.isString && it.asString().value == "isdbgrid" } == true
}
