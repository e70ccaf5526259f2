package dev.mooring.testkit.server

import de.bwaldvogel.mongo.backend.memory.MemoryBackend
import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonString
import org.bson.BsonValue

/**
 * The multi-document transactions of [InMemoryCollections] (commands with `autocommit: false`), as
 * mongod keeps them apart, at collection granularity:
 *
 * - a transaction's commands run on a **view** of its own: a [MemoryBackend] holding a copy of
 *   each collection it touches, taken (documents and indexes) on its first touch; its writes are
 *   applied there (so its own reads see them and their replies are mongod's) and recorded;
 * - `commitTransaction` replays the recorded writes on the shared data (nothing of a transaction
 *   is visible outside it before); a commit repeated after success is `ok` (idempotent);
 * - a write to a collection another open transaction wrote, or that changed since the
 *   transaction's copy of it (a committed write of someone else), fails with WriteConflict (112,
 *   `TransientTransactionError`) and aborts the transaction; so does a commit whose collections
 *   changed meanwhile (outside writes are not blocked, as mongod's would be, but fail the commit);
 * - through a mongos (a [execute] `router`): a commit reaching another router than the one that
 *   started the transaction recovers its outcome: committed stays committed, an open one is aborted
 *   (NoSuchTransaction), as a sharded cluster's recovery of a transaction whose commit never began;
 * - a command that fails (an error reply, a write error) aborts its transaction, as on mongod;
 * - a command for a transaction that is not open (aborted, unknown, replaced by a newer
 *   `txnNumber`) fails with NoSuchTransaction (251, `TransientTransactionError`); an abort aborts.
 *
 * Not modeled: document-level conflicts (two transactions writing different documents of one
 * collection conflict), one snapshot for the whole transaction (each collection is copied when
 * first touched), prepared transactions and two-phase commit across shards, transaction
 * lifetime limits, writes blocking on a transaction's locks. Used under [InMemoryCollections]' lock.
 */
internal class ServerTransactions(private val copyInto: (view: MemoryBackend, ns: String) -> Unit) {
    private enum class State { OPEN, COMMITTED, ABORTED }

    private class Txn(val number: Long, val router: Any?) {
        var state = State.OPEN
        val view = MemoryBackend()
        val copied = HashMap<String, Long>() // namespace -> its version when copied
        val written = LinkedHashSet<String>()
        val writes = ArrayList<Pair<String, BsonDocument>>() // (db, command), in order
    }

    private val bySession = HashMap<BsonValue, Txn>()
    private val versions = HashMap<String, Long>()

    /** Aborts every open transaction (a primary stepping down). */
    fun abortAll() {
        bySession.values.forEach { if (it.state == State.OPEN) it.state = State.ABORTED }
    }

    /** Records a write to [ns] outside any transaction (the transactions' copies of it are now stale). */
    fun changed(ns: String) {
        versions[ns] = (versions[ns] ?: 0) + 1
    }

    /**
     * Answers [cmd] (`autocommit: false`) on [db]: runs a data command on the transaction's view
     * with [onView], or ends the transaction; [replay] applies a recorded write on the shared data.
     */
    fun execute(
        db: String,
        cmd: BsonDocument,
        onView: (MemoryBackend, BsonDocument) -> BsonDocument,
        replay: (String, BsonDocument) -> BsonDocument,
        router: Any? = null,
    ): BsonDocument {
        val lsid = (cmd["lsid"] as? BsonDocument)?.get("id") ?: return WireServer.error(50768, "InvalidOptions", "a transaction needs an lsid")
        val number = cmd["txnNumber"]?.takeIf { it.isNumber }?.asNumber()?.longValue()
            ?: return WireServer.error(50768, "InvalidOptions", "a transaction needs a txnNumber")
        val current = bySession[lsid]
        if (current != null && number < current.number) {
            return WireServer.error(TRANSACTION_TOO_OLD, "TransactionTooOld", "txnNumber $number is older than ${current.number}")
        }
        val name = cmd.firstKey
        if (cmd["startTransaction"]?.let { it.isBoolean && it.asBoolean().value } == true) {
            if (current != null && current.number == number) {
                return WireServer.error(CONFLICTING_OPERATION, "ConflictingOperationInProgress", "transaction $number already started")
            }
            bySession[lsid] = Txn(number, router)
        }
        val txn = bySession[lsid]?.takeIf { it.number == number } ?: return noSuchTransaction(number)
        return when (name) {
            // a commit reaching another mongos (with the recoveryToken) recovers the outcome: a transaction never committed is aborted
            COMMIT -> if (txn.router != null && router != txn.router && txn.state == State.OPEN) { txn.state = State.ABORTED; noSuchTransaction(number) } else commit(txn, replay)
            ABORT -> if (txn.state == State.OPEN) { txn.state = State.ABORTED; WireServer.ok() } else noSuchTransaction(number)
            else -> if (txn.state != State.OPEN) noSuchTransaction(number) else inTransaction(db, txn, stripped(cmd), onView)
        }
    }

    private fun inTransaction(db: String, txn: Txn, cmd: BsonDocument, onView: (MemoryBackend, BsonDocument) -> BsonDocument): BsonDocument {
        val ns = namespace(db, cmd)
        if (ns != null && ns !in txn.copied) {
            copyInto(txn.view, ns)
            txn.copied[ns] = versions[ns] ?: 0
        }
        val writes = cmd.firstKey in InMemoryCollections.WRITES
        if (writes && ns != null) {
            val other = bySession.values.any { it !== txn && it.state == State.OPEN && ns in it.written }
            if (other || (versions[ns] ?: 0) != txn.copied[ns]) return writeConflict(txn)
        }
        val reply = onView(txn.view, cmd)
        // mongod aborts a transaction whose statement failed (a write error, a command error)
        if (reply["ok"]?.let { it.isNumber && it.asNumber().doubleValue() == 1.0 } != true || reply.containsKey("writeErrors")) {
            txn.state = State.ABORTED
            return reply
        }
        if (writes) {
            txn.writes += db to cmd
            ns?.let { txn.written += it }
        }
        return reply
    }

    private fun commit(txn: Txn, replay: (String, BsonDocument) -> BsonDocument): BsonDocument {
        when (txn.state) {
            State.COMMITTED -> return WireServer.ok()
            State.ABORTED -> return noSuchTransaction(txn.number)
            State.OPEN -> Unit
        }
        if (txn.written.any { (versions[it] ?: 0) != txn.copied[it] }) return writeConflict(txn)
        for ((db, cmd) in txn.writes) replay(db, cmd)
        txn.written.forEach { changed(it) }
        txn.state = State.COMMITTED
        return WireServer.ok()
    }

    private fun writeConflict(txn: Txn): BsonDocument {
        txn.state = State.ABORTED
        return transient(WireServer.error(WRITE_CONFLICT, "WriteConflict", "Write conflict during plan execution and yielding is disabled."))
    }

    private fun noSuchTransaction(number: Long) = transient(WireServer.error(NO_SUCH_TRANSACTION, "NoSuchTransaction", "Transaction with txnNumber $number has been aborted or does not exist."))

    private fun transient(reply: BsonDocument) = reply.append("errorLabels", BsonArray(listOf(BsonString(TransactionLabels.TRANSIENT))))

    companion object {
        const val COMMIT = "commitTransaction"
        const val ABORT = "abortTransaction"
        private const val WRITE_CONFLICT = 112
        private const val NO_SUCH_TRANSACTION = 251
        private const val TRANSACTION_TOO_OLD = 225
        private const val CONFLICTING_OPERATION = 117

        /** True when [cmd] runs in (or ends) a transaction: `autocommit: false`. */
        fun inTransaction(cmd: BsonDocument): Boolean = cmd["autocommit"]?.let { it.isBoolean && !it.asBoolean().value } == true

        /** The `db.collection` [cmd] reads or writes, or null (a command on no collection). */
        fun namespace(db: String, cmd: BsonDocument): String? = cmd[cmd.firstKey]?.takeIf { it.isString }?.let { "$db.${it.asString().value}" }

        /** [cmd] without the session and transaction fields (the engine sees a plain command). */
        fun stripped(cmd: BsonDocument): BsonDocument = BsonDocument().also { d ->
            for ((k, v) in cmd) if (k !in TRANSACTION_FIELDS) d[k] = v
        }

        private val TRANSACTION_FIELDS = setOf("lsid", "txnNumber", "autocommit", "startTransaction", "readConcern", "writeConcern", "\$clusterTime")
    }
}
