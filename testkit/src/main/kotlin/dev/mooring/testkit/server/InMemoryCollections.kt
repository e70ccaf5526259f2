package dev.mooring.testkit.server

import de.bwaldvogel.mongo.backend.memory.MemoryBackend
import de.bwaldvogel.mongo.exception.MongoServerError
import de.bwaldvogel.mongo.exception.MongoServerException
import dev.mooring.testkit.server.changes.ChangeEventLog
import dev.mooring.testkit.server.changes.ChangeRecorder
import dev.mooring.testkit.server.changes.ChangeStreamCursors
import io.netty.channel.embedded.EmbeddedChannel
import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonInt64
import org.bson.BsonString
import org.bson.BsonValue

/**
 * The data of the test kit's servers: mongo-java-server's memory backend ([MemoryBackend]) behind
 * the test kit's front end. The backend answers the data commands ([COMMANDS]: find, aggregate,
 * insert, update, delete, findAndModify, count, distinct, create, drop, dropDatabase, the index and
 * listing commands, renameCollection); a cursor-returning reply comes back whole (every result in
 * its first batch, cursor id 0), the serving [WireServer]'s [ServerCursors] batch it. What only
 * the test kit does stays here: retryable-write statement history ([RetryableWriteHistory]) under
 * the `onPrimaryTransactionalWrite` fail point, the `bulkWrite` admin command's front end
 * ([ClientBulkWriteCommand], each operation executed on the backend) and the `$where` sleep
 * ([WhereSleep]: the server sleeps, the clause matches every document). Features the backend
 * lacks are refused with the error a server that does not know them returns ([UnsupportedFeatures]);
 * `mapReduce` is CommandNotFound; the search index commands are refused as by a server without
 * Atlas Search ([SearchIndexCommands]). Commands with `autocommit: false` run in multi-document
 * transactions ([ServerTransactions]: each on a view of its own, applied at commit). Thread-safe
 * (one lock per instance).
 */
class InMemoryCollections {
    private val shared = MemoryBackend()

    /** The backend the commands run on: [shared], or a transaction's view while one of its commands runs. */
    private var backend = shared

    private val transactions = ServerTransactions(::copyInto)

    /** The backend keeps per-connection state (getLastError) by channel; the test kit's servers share one. */
    private val channel = EmbeddedChannel()
    private val history = RetryableWriteHistory()

    /** The change events of the writes applied here, which the servers' change streams read ([ChangeStreamCursors]). */
    val changeEvents: ChangeEventLog = ChangeEventLog()
    private val recorder = ChangeRecorder(changeEvents, ::documents, ::collectionNames)

    /** A copy of the documents in [db].[collection], in the backend's natural order. */
    @Synchronized
    fun documents(db: String, collection: String): List<BsonDocument> {
        val reply = backendCommand(db, BsonDocument("find", BsonString(collection)))
        return (reply["cursor"] as? BsonDocument)?.getArray("firstBatch")?.map { it.asDocument() } ?: emptyList()
    }

    /**
     * Answers the data command [cmd] (its first key names it) on [db], or returns null when
     * [cmd] is not one of [COMMANDS]. A retryable write (`lsid` + `txnNumber`) runs statement by
     * statement, remembered for retries ([RetryableWriteHistory]), under the
     * `onPrimaryTransactionalWrite` [failPoint] if any: when it closes the connection,
     * [FailPointClosedConnection] is thrown. [router] is the mongos a command came through (null: a mongod).
     * [maxWireVersion] is the wire version of the server answering (21, MongoDB 7.0, unless
     * given): the options its release does not know yet are refused ([UnsupportedFeatures]), and
     * what it does not store ([DollarPrefixedFieldNames]).
     */
    @Synchronized
    fun execute(
        db: String,
        cmd: BsonDocument,
        failPoint: TransactionalWriteFailPoint? = null,
        router: Any? = null,
        maxWireVersion: Int = UnsupportedFeatures.DEFAULT_WIRE_VERSION,
    ): BsonDocument? {
        val name = cmd.keys.firstOrNull()
        if (ServerTransactions.inTransaction(cmd) && (name in COMMANDS || name == ServerTransactions.COMMIT || name == ServerTransactions.ABORT)) {
            return transactions.execute(db, cmd, onView = { view, c -> onBackend(view) { dispatch(db, c, maxWireVersion = maxWireVersion) } }, replay = { d, c -> dispatch(d, c, maxWireVersion = maxWireVersion) }, router)
        }
        if (name !in COMMANDS) return null
        snapshotRefusal(cmd)?.let { return it }
        if (name in WRITES) ServerTransactions.namespace(db, cmd)?.let { transactions.changed(it) }
        return try {
            if (RetryableWriteHistory.tracks(cmd)) history.run(cmd, failPoint) { one -> dispatch(db, one, maxWireVersion = maxWireVersion) } else dispatch(db, cmd, failPoint, maxWireVersion)
        } catch (e: FailPointStatementError) {
            FailCommandFailPoint.errorDocument(e.code, e.message!!)
        }
    }

    /**
     * Aborts every open transaction, as a primary that steps down (or restarts) does: their
     * next command or commit fails with NoSuchTransaction.
     */
    @Synchronized
    fun abortOpenTransactions() {
        transactions.abortAll()
    }

    /** mongod's refusal of `readConcern: {level: "snapshot"}` outside a transaction for anything but find, aggregate and distinct. */
    private fun snapshotRefusal(cmd: BsonDocument): BsonDocument? {
        val level = (cmd["readConcern"] as? BsonDocument)?.get("level")?.takeIf { it.isString }?.asString()?.value
        if (level != "snapshot" || cmd.firstKey in setOf("find", "aggregate", "distinct")) return null
        return WireServer.error(72, "InvalidOptions", "readConcern level snapshot is only valid in multi-statement transactions or for find, aggregate and distinct")
    }

    /** Runs [block] with the commands going to [view] (a transaction's), then back to the shared data. */
    private fun <T> onBackend(view: MemoryBackend, block: () -> T): T {
        backend = view
        try {
            return block()
        } finally {
            backend = shared
        }
    }

    /** Copies the collection [ns] of the shared data (its indexes and documents) into a transaction's [view]. */
    private fun copyInto(view: MemoryBackend, ns: String) {
        val db = ns.substringBefore('.')
        val collection = ns.substringAfter('.')
        val names = (backendCommand(db, BsonDocument("listCollections", BsonInt32(1)))["cursor"] as? BsonDocument)?.getArray("firstBatch")
        if (names?.any { (it as? BsonDocument)?.get("name") == BsonString(collection) } != true) return
        val indexes = (backendCommand(db, BsonDocument("listIndexes", BsonString(collection)))["cursor"] as? BsonDocument)?.getArray("firstBatch") ?: return
        val docs = documents(db, collection)
        onBackend(view) {
            backendCommand(db, BsonDocument("create", BsonString(collection)))
            val secondary = indexes.map { it.asDocument() }.filter { it.getString("name", BsonString("")).value != "_id_" }
                .map { BsonDocument("key", it["key"]).append("name", it["name"]).also { d -> it["unique"]?.let { u -> d["unique"] = u } } }
            if (secondary.isNotEmpty()) backendCommand(db, BsonDocument("createIndexes", BsonString(collection)).append("indexes", BsonArray(secondary)))
            if (docs.isNotEmpty()) backendCommand(db, BsonDocument("insert", BsonString(collection)).append("documents", BsonArray(docs)))
        }
    }

    /**
     * [cmd] (one of [COMMANDS]) on [db] of a server of [maxWireVersion]; a bulkWrite's statements run
     * under the transactional-write [failPoint]. The fields its release does not know are refused
     * ([ServerVersionFields], as the wire front end does for every command), then what the engine
     * lacks ([UnsupportedFeatures]); its `let` variables are bound first ([LetVariables]).
     */
    private fun dispatch(db: String, cmd: BsonDocument, failPoint: TransactionalWriteFailPoint? = null, maxWireVersion: Int = UnsupportedFeatures.DEFAULT_WIRE_VERSION): BsonDocument =
        ServerVersionFields.refusal(cmd, ServerVersion.ofWireVersion(maxWireVersion)) ?: UnsupportedFeatures.refusal(cmd, maxWireVersion)
            ?: boundDispatch(db, cmd, failPoint, maxWireVersion)

    private fun boundDispatch(db: String, unbound: BsonDocument, failPoint: TransactionalWriteFailPoint?, maxWireVersion: Int): BsonDocument {
        val version = ServerVersion.ofWireVersion(maxWireVersion)
        val cmd = try {
            LetVariables.bound(unbound)
        } catch (e: RuntimeException) {
            return PipelineUpdates.engineError(e)
        }
        return when (cmd.firstKey) {
            ClientBulkWriteCommand.NAME -> ClientBulkWriteCommand.execute(db, cmd, history, failPoint) { d, one -> dispatch(d, one, maxWireVersion = maxWireVersion) }
            MAP_REDUCE -> WireServer.error(59, "CommandNotFound", "no such command: '$MAP_REDUCE' (the test kit's data engine has no mapReduce)")
            // MongoDB 7.0 (the version the test kit's servers report) drops a collection that does not exist without an error
            "drop" -> run(db, cmd, version).let { if (it["code"] == BsonInt32(NAMESPACE_NOT_FOUND)) BsonDocument("ok", BsonInt32(1)) else it }
            else -> when {
                ListLocalSessions.matches(cmd) -> ListLocalSessions.reply(db)
                SearchIndexCommands.matches(cmd) -> SearchIndexCommands.reply()
                else -> run(db, WhereSleep.withoutSleep(cmd), version)
            }
        }
    }

    /** [cmd] on the backend as [version] answers it; a write statement by statement ([WriteStatements]). */
    private fun run(db: String, cmd: BsonDocument, version: ServerVersion): BsonDocument =
        if (WriteStatements.handles(cmd)) {
            WriteStatements.execute(cmd) { one -> recorder.recorded(db, one) { UnsupportedFeatures.filterError(one) ?: DollarPrefixedFieldNames.refusal(one, version) ?: composed(db, one) ?: backendCommand(db, one) } }
        } else {
            recorder.recorded(db, cmd) { UnsupportedFeatures.filterError(cmd) ?: DollarPrefixedFieldNames.refusal(cmd, version) ?: composed(db, cmd) ?: backendCommand(db, cmd) }
        }

    /** [cmd] as several engine commands when the engine cannot take it as one ([ComposedUpdates]), or null. */
    private fun composed(db: String, cmd: BsonDocument): BsonDocument? = ComposedUpdates.execute(cmd) { backendCommand(db, it) }

    /** The names of [db]'s collections. */
    private fun collectionNames(db: String): List<String> =
        (backendCommand(db, BsonDocument("listCollections", BsonInt32(1)).append("nameOnly", org.bson.BsonBoolean.TRUE))["cursor"] as? BsonDocument)
            ?.getArray("firstBatch")?.mapNotNull { (it as? BsonDocument)?.getString("name")?.value } ?: emptyList()

    /** [cmd] answered by the backend, its errors as server error replies, its cursor drained. */
    private fun backendCommand(db: String, cmd: BsonDocument): BsonDocument {
        val reply = try {
            withIntOk(BackendDocuments.fromBackend(backend.handleCommand(channel, db, cmd.firstKey, BackendDocuments.toBackend(cmd))))
        } catch (e: MongoServerError) {
            WireServer.error(e.code, e.codeName ?: "Location${e.code}", e.messageWithoutErrorCode)
        } catch (e: MongoServerException) {
            // the engine's errors without a code carry mongod's message; the code is the one mongod sends with it
            val namespaceNotFound = e.messageWithoutErrorCode in NAMESPACE_NOT_FOUND_MESSAGES
            if (namespaceNotFound) WireServer.error(NAMESPACE_NOT_FOUND, "NamespaceNotFound", e.messageWithoutErrorCode) else WireServer.error(UNKNOWN_ERROR, "UnknownError", e.messageWithoutErrorCode)
        } catch (e: RuntimeException) {
            // the engine choked on a value it cannot take (a malformed argument): what mongod's parser refuses
            WireServer.error(BAD_VALUE, "BadValue", e.message ?: e.toString())
        } finally {
            // the engine records each write's outcome per channel for getLastError, which no test kit client sends: forget it
            backend.handleClose(channel)
        }
        return withCollectionNamespace(cmd, drained(db, reply))
    }

    /** [reply] with `ok` an int32, as in every other reply of the test kit's servers (the engine sends a double). */
    private fun withIntOk(reply: BsonDocument): BsonDocument {
        val ok = reply["ok"]?.takeIf { it.isDouble } ?: return reply
        return reply.apply { put("ok", BsonInt32(ok.asDouble().value.toInt())) }
    }

    /** A listIndexes reply's cursor names the collection, as mongod's (the engine names the command). */
    private fun withCollectionNamespace(cmd: BsonDocument, reply: BsonDocument): BsonDocument {
        val cursor = reply["cursor"] as? BsonDocument
        if (cmd.firstKey != "listIndexes" || cursor == null || !cmd[cmd.firstKey]!!.isString) return reply
        val ns = cursor.getString("ns").value.substringBefore('.') + "." + cmd.getString(cmd.firstKey).value
        return reply.clone().apply { put("cursor", cursor.clone().append("ns", BsonString(ns))) }
    }

    /** [reply] with every result of its cursor in `firstBatch` and cursor id 0 (the backend's cursor is exhausted). */
    private fun drained(db: String, reply: BsonDocument): BsonDocument {
        val cursor = reply["cursor"] as? BsonDocument ?: return reply
        var id = cursor["id"]?.takeIf { it.isNumber }?.asNumber()?.longValue() ?: return reply
        if (id == 0L) return reply
        val all = ArrayList<BsonValue>(cursor.getArray("firstBatch"))
        val collection = cursor.getString("ns").value.substringAfter('.')
        while (id != 0L) {
            val more = backendCommand(db, BsonDocument("getMore", BsonInt64(id)).append("collection", BsonString(collection)))
            val next = more["cursor"] as? BsonDocument ?: return more
            all.addAll(next.getArray("nextBatch"))
            id = next.getNumber("id").longValue()
        }
        return reply.clone().apply {
            put("cursor", BsonDocument("firstBatch", BsonArray(all)).append("id", BsonInt64(0)).append("ns", cursor.getString("ns")))
        }
    }

    companion object {
        private const val MAP_REDUCE = "mapReduce"
        private const val UNKNOWN_ERROR = 8
        private const val BAD_VALUE = 2
        private const val NAMESPACE_NOT_FOUND = 26
        private val NAMESPACE_NOT_FOUND_MESSAGES = setOf("ns not found", "source namespace does not exist")

        /** The commands [execute] answers. */
        val COMMANDS: Set<String> = setOf(
            "insert", "find", "update", "delete", "findAndModify", "count", "distinct", "aggregate",
            "create", "drop", "dropDatabase", "createIndexes", "dropIndexes", "listIndexes", "listCollections", "listDatabases",
            "renameCollection", ClientBulkWriteCommand.NAME, MAP_REDUCE,
        ) + SearchIndexCommands.COMMANDS

        /** The commands of [COMMANDS] that write (a replica set member accepts them only as primary). */
        val WRITES: Set<String> = setOf(
            "insert", "update", "delete", "findAndModify", "create", "drop", "dropDatabase", "createIndexes", "dropIndexes",
            "renameCollection", ClientBulkWriteCommand.NAME,
        )
    }
}
