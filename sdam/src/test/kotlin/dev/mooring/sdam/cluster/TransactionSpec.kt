package dev.mooring.sdam.cluster

import dev.mooring.cmap.MongoCommandException
import dev.mooring.cmap.MongoNetworkException
import dev.mooring.cmap.PoolClearedException
import dev.mooring.sdam.ClientSession
import dev.mooring.sdam.ClientSessionOptions
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoTransactionStateException
import dev.mooring.sdam.ReadPreference
import dev.mooring.sdam.ReadPreferenceMode
import dev.mooring.sdam.RunCursorCommandOptions
import dev.mooring.sdam.ServerType
import dev.mooring.sdam.TransactionOptions
import dev.mooring.sdam.TransactionState
import dev.mooring.sdam.WriteAcknowledgement
import dev.mooring.sdam.WriteConcern
import dev.mooring.testkit.server.ClusterTimeKeeper
import dev.mooring.testkit.server.DefaultHello
import dev.mooring.testkit.server.Reply
import dev.mooring.testkit.server.WireServer
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.shouldNotBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.types.shouldBeInstanceOf
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.async
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.launch
import kotlinx.coroutines.withTimeout
import org.bson.BsonArray
import org.bson.BsonBoolean
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonInt64
import org.bson.BsonString
import org.bson.BsonTimestamp
import java.util.Collections
import kotlin.time.Duration.Companion.seconds

/**
 * Transactions (transactions.md), causal consistency and snapshot sessions against a scripted
 * replica set primary: what each command of a transaction carries, the state machine and its
 * misuse errors, the commit and abort retries and the error labels.
 */
class TransactionSpec : FunSpec({
    timeout = 120.seconds.inWholeMilliseconds

    class Scripted(val server: WireServer) {
        val received: MutableList<BsonDocument> = Collections.synchronizedList(ArrayList())
        @Volatile var script: suspend (attempt: Int, BsonDocument) -> Reply? = { _, _ -> null }

        fun commands(name: String): List<BsonDocument> = synchronized(received) { received.filter { it.firstKey == name } }
        fun sent(): List<BsonDocument> = synchronized(received) { received.toList() }

        init {
            server.hello = { ctx, request ->
                DefaultHello.standalone(ctx, request).apply {
                    put("setName", BsonString("rs0"))
                    put("hosts", BsonArray(listOf(BsonString(server.address.toString()))))
                    put("secondary", BsonBoolean.FALSE)
                }
            }
            server.handler = { _, _, cmd ->
                val name = cmd.firstKey
                if (name == "hello" || name == "isMaster" || name == "ismaster") {
                    null
                } else {
                    received.add(cmd)
                    script(commands(name).size, cmd) ?: if (name == "commitTransaction" || name == "abortTransaction") Reply.Document(WireServer.ok()) else null
                }
            }
        }
    }

    suspend fun <T> scripted(clusterTime: Boolean = false, uriOptions: String = "", block: suspend Scripted.(MongoCluster) -> T): T {
        val server = WireServer.start()
        if (clusterTime) server.clusterTime = ClusterTimeKeeper()
        val s = Scripted(server)
        val cluster = MongoCluster("mongodb://${server.address}/?directConnection=true&serverSelectionTimeoutMS=2000$uriOptions")
        try {
            cluster.awaitTopology { t -> t.servers.values.any { it.type == ServerType.RS_PRIMARY } }
            return s.block(cluster)
        } finally {
            cluster.closeAndCheckNoCoroutines()
            server.close()
        }
    }

    fun insert(id: Int) = BsonDocument.parse("{insert: 'c', documents: [{_id: $id}], writeConcern: {w: 1}}")
    fun find() = BsonDocument.parse("{find: 'c', readConcern: {level: 'local'}}")
    fun error(code: Int, vararg labels: String) = Reply.Document(
        WireServer.error(code, "Code$code", "scripted error").apply { if (labels.isNotEmpty()) put("errorLabels", BsonArray(labels.map { BsonString(it) })) },
    )

    test("commands in a transaction carry txnNumber and autocommit; the first startTransaction and the transaction's read concern; only commit its write concern") {
        scripted { c ->
            c.startSession().use { session ->
                session.startTransaction(TransactionOptions(readConcernLevel = "snapshot", writeConcern = WriteConcern(WriteAcknowledgement.MAJORITY)))
                session.transactionState shouldBe TransactionState.Starting
                c.runRetryableWrite("db", insert(1), session)
                session.transactionState shouldBe TransactionState.InProgress
                c.runRetryableRead("db", find(), ReadPreference.PRIMARY, session)
                c.runCursorCommand("db", find(), RunCursorCommandOptions(session = session)).toList()
                session.commitTransaction()
                session.transactionState shouldBe TransactionState.Committed
            }
            val (ins, f1, f2, commit) = sent()
            ins["txnNumber"] shouldBe BsonInt64(1)
            ins["startTransaction"] shouldBe BsonBoolean.TRUE
            ins["autocommit"] shouldBe BsonBoolean.FALSE
            ins["readConcern"] shouldBe BsonDocument("level", BsonString("snapshot"))
            ins.containsKey("writeConcern") shouldBe false
            for (cmd in listOf(f1, f2)) {
                cmd["txnNumber"] shouldBe BsonInt64(1)
                cmd["autocommit"] shouldBe BsonBoolean.FALSE
                cmd.containsKey("startTransaction") shouldBe false
                cmd.containsKey("readConcern") shouldBe false
            }
            commit.firstKey shouldBe "commitTransaction"
            commit["txnNumber"] shouldBe BsonInt64(1)
            commit["autocommit"] shouldBe BsonBoolean.FALSE
            commit.containsKey("startTransaction") shouldBe false
            commit["writeConcern"] shouldBe BsonDocument("w", BsonString("majority"))
            commit["lsid"] shouldBe ins["lsid"]
        }
    }

    test("the state machine refuses misuse with the spec's errors and sends nothing for an empty transaction") {
        scripted { c ->
            c.startSession().use { session ->
                shouldThrow<MongoTransactionStateException> { session.commitTransaction() }.message shouldContain "No transaction started"
                shouldThrow<MongoTransactionStateException> { session.abortTransaction() }.message shouldContain "No transaction started"
                session.startTransaction()
                shouldThrow<MongoTransactionStateException> { session.startTransaction() }.message shouldContain "already in progress"
                session.commitTransaction()
                session.transactionState shouldBe TransactionState.CommittedEmpty
                session.commitTransaction() // again: still empty, nothing sent
                shouldThrow<MongoTransactionStateException> { session.abortTransaction() }.message shouldContain "after calling commitTransaction"
                session.startTransaction()
                session.abortTransaction()
                shouldThrow<MongoTransactionStateException> { session.abortTransaction() }.message shouldContain "twice"
                shouldThrow<MongoTransactionStateException> { session.commitTransaction() }.message shouldContain "after calling abortTransaction"
                shouldThrow<MongoTransactionStateException> { session.startTransaction(TransactionOptions(writeConcern = WriteConcern(WriteAcknowledgement.Nodes(0)))) }
                    .message shouldContain "unacknowledged"
                // an operation outside a transaction forgets the ended one
                c.runCommand("db", ping(), ReadPreference.PRIMARY, session)
                session.transactionState shouldBe TransactionState.None
            }
            sent().map { it.firstKey } shouldBe listOf("ping")
            c.startSession(ClientSessionOptions(snapshot = true)).use { snap ->
                shouldThrow<MongoTransactionStateException> { snap.startTransaction() }.message shouldContain "snapshot"
            }
        }
    }

    test("a transaction's reads must go to the primary; the operation's own read preference is ignored") {
        scripted { c ->
            c.startSession().use { session ->
                session.startTransaction(TransactionOptions(readPreference = ReadPreference(ReadPreferenceMode.SECONDARY)))
                shouldThrow<MongoTransactionStateException> { c.runRetryableRead("db", find(), ReadPreference.PRIMARY, session) }.message shouldContain "must be primary"
                session.abortTransaction()
                session.startTransaction()
                c.runRetryableRead("db", find(), ReadPreference(ReadPreferenceMode.SECONDARY_PREFERRED), session)
                // a direct connection's primary read preference (primaryPreferred), not the operation's
                sent().last()["\$readPreference"] shouldBe BsonDocument("mode", BsonString("primaryPreferred"))
                session.abortTransaction()
            }
        }
    }

    test("a network error in a transaction is labelled TransientTransactionError and not retried") {
        scripted { c ->
            script = { _, cmd -> if (cmd.firstKey == "insert") Reply.CloseConnection else null }
            c.startSession().use { session ->
                session.startTransaction()
                val e = shouldThrow<MongoNetworkException> { c.runRetryableWrite("db", insert(1), session) }
                e.hasErrorLabel("TransientTransactionError") shouldBe true
                e.hasErrorLabel("RetryableWriteError") shouldBe false
                session.abortTransaction()
            }
            commands("insert").size shouldBe 1
        }
    }

    test("a PoolClearedError in a transaction is labelled TransientTransactionError (the bank spec's failed transfers)") {
        // one connection: the transaction's insert waits for it while another operation holds it; that
        // operation's network error clears the pool, and the waiting checkout fails with PoolClearedError
        scripted(uriOptions = "&maxPoolSize=1") { c ->
            val release = CompletableDeferred<Unit>()
            script = { _, cmd -> if (cmd.firstKey == "ping") { release.await(); Reply.CloseConnection } else null }
            coroutineScope {
                val holder = launch { runCatching { c.runCommand("db", BsonDocument("ping", BsonInt32(1))) } }
                while (commands("ping").isEmpty()) delay(5)
                c.startSession().use { session ->
                    session.startTransaction()
                    val waiting = async { runCatching { c.runRetryableWrite("db", insert(1), session) }.exceptionOrNull() }
                    while (c.poolStatistics().values.sumOf { it.waitQueueSize } == 0) delay(5)
                    release.complete(Unit)
                    val e = waiting.await()
                    e.shouldBeInstanceOf<PoolClearedException>()
                    e.hasErrorLabel("TransientTransactionError") shouldBe true
                    session.abortTransaction()
                }
                holder.join()
            }
            commands("insert").size shouldBe 0
        }
    }

    test("commit is retried once after a retryable error, with w: majority and wtimeout 10000; a second failure is UnknownTransactionCommitResult") {
        scripted { c ->
            script = { _, cmd -> if (cmd.firstKey == "commitTransaction") Reply.CloseConnection else null }
            c.startSession().use { session ->
                session.startTransaction(TransactionOptions(writeConcern = WriteConcern(WriteAcknowledgement.Nodes(1))))
                c.runRetryableWrite("db", insert(1), session)
                val e = shouldThrow<MongoNetworkException> { session.commitTransaction() }
                e.hasErrorLabel("UnknownTransactionCommitResult") shouldBe true
                e.hasErrorLabel("TransientTransactionError") shouldBe false
                session.transactionState shouldBe TransactionState.Committed
            }
            val commits = commands("commitTransaction")
            commits.size shouldBe 2
            commits[0]["writeConcern"] shouldBe BsonDocument("w", BsonInt32(1))
            commits[1]["writeConcern"] shouldBe BsonDocument("w", BsonString("majority")).append("wtimeout", BsonInt64(10_000))
            commits[1]["txnNumber"] shouldBe commits[0]["txnNumber"]
        }
    }

    test("a commit called again is sent with w: majority; maxCommitTimeMS becomes maxTimeMS") {
        scripted { c ->
            c.startSession().use { session ->
                session.startTransaction(TransactionOptions(maxCommitTimeMS = 60_000))
                c.runRetryableWrite("db", insert(1), session)
                session.commitTransaction()
                session.commitTransaction()
            }
            val commits = commands("commitTransaction")
            commits[0]["maxTimeMS"] shouldBe BsonInt64(60_000)
            commits[0].containsKey("writeConcern") shouldBe false
            commits[1]["writeConcern"] shouldBe BsonDocument("w", BsonString("majority")).append("wtimeout", BsonInt64(10_000))
        }
    }

    test("a commit's write concern error is thrown with its code and labelled UnknownTransactionCommitResult, but not UnsatisfiableWriteConcern") {
        scripted { c ->
            var code = 64
            script = { _, cmd ->
                if (cmd.firstKey == "commitTransaction") {
                    Reply.Document(WireServer.ok().append("writeConcernError", BsonDocument("code", BsonInt32(code)).append("errmsg", BsonString("wce"))))
                } else null
            }
            c.startSession().use { session ->
                session.startTransaction()
                c.runRetryableWrite("db", insert(1), session)
                val e = shouldThrow<MongoCommandException> { session.commitTransaction() }
                e.code shouldBe 64
                e.hasErrorLabel("UnknownTransactionCommitResult") shouldBe true
                code = 100
                val e2 = shouldThrow<MongoCommandException> { session.commitTransaction() }
                e2.code shouldBe 100
                e2.hasErrorLabel("UnknownTransactionCommitResult") shouldBe false
            }
        }
    }

    test("abort ignores its errors and is retried once on a retryable one; closing a session aborts its transaction") {
        scripted { c ->
            script = { _, cmd -> if (cmd.firstKey == "abortTransaction") Reply.CloseConnection else null }
            c.startSession().use { session ->
                session.startTransaction()
                c.runRetryableWrite("db", insert(1), session)
                session.abortTransaction()
                session.transactionState shouldBe TransactionState.Aborted
            }
            commands("abortTransaction").size shouldBe 2
            script = { _, _ -> null }
            val session = c.startSession()
            session.startTransaction()
            // another collection: the first transaction's aborts never reached the test kit, which keeps it open (a conflict on 'c')
            c.runRetryableWrite("db", BsonDocument.parse("{insert: 'c2', documents: [{_id: 2}]}"), session)
            session.close()
            withTimeout(10.seconds) { while (commands("abortTransaction").size < 3) kotlinx.coroutines.delay(10) }
            commands("abortTransaction").last()["lsid"] shouldBe session.lsid
        }
    }

    test("endSession aborts a transaction in progress before it returns; without a transaction it sends nothing") {
        scripted { c ->
            val session = c.startSession()
            session.startTransaction()
            c.runRetryableWrite("db", BsonDocument.parse("{insert: 'c3', documents: [{_id: 3}]}"), session)
            session.endSession()
            commands("abortTransaction").size shouldBe 1 // sent and answered before endSession returned: no waiting
            commands("abortTransaction").single()["lsid"] shouldBe session.lsid
            session.isEnded shouldBe true
            session.endSession() // idempotent
            val plain = c.startSession()
            plain.endSession()
            commands("abortTransaction").size shouldBe 1
        }
    }

    test("the generic runCommand and runCursorCommand get no afterClusterTime in a causally consistent session; a helper's command (HelperCommand) and cursor (CursorPage) do") {
        scripted(clusterTime = true) { c ->
            c.startSession().use { session ->
                c.runRetryableWrite("db", insert(1), session)
                val time = session.operationTime
                time shouldNotBe null
                // causal-consistency.md: commands run using runCommand MUST NOT have an afterClusterTime added
                c.runCommand("db", BsonDocument.parse("{find: 'c', filter: {}}"), ReadPreference.PRIMARY, session)
                commands("find").last().containsKey("readConcern") shouldBe false
                // run-command.md builds runCursorCommand upon RunCommand: the same MUST NOT
                c.runCursorCommand("db", BsonDocument.parse("{find: 'c', filter: {}}"), RunCursorCommandOptions(session = session)).toList()
                commands("find").last().containsKey("readConcern") shouldBe false
                // the driver's cursor helpers (find, aggregate, the listings) open theirs through CursorPage.pages: they get it
                val beforeHelperFind = session.operationTime!!
                dev.mooring.sdam.internal.cursor.CursorPage.pages(c, "db", BsonDocument.parse("{find: 'c', filter: {}}"), RunCursorCommandOptions(session = session)).toList()
                commands("find").last()["readConcern"] shouldBe BsonDocument("afterClusterTime", beforeHelperFind)
                val seen = session.operationTime!! // the operation time as the drop is sent (its reply advances it)
                dev.mooring.sdam.internal.HelperCommand.run(c, "db", BsonDocument.parse("{drop: 'c'}"), ReadPreference.PRIMARY, session)
                commands("drop").last()["readConcern"] shouldBe BsonDocument("afterClusterTime", seen)
                // transactions.md "Causal Consistency with RunCommand helper": a transaction's first command gets it, even through runCommand
                session.startTransaction()
                val beforeTxn = session.operationTime!!
                c.runCommand("db", insert(2), ReadPreference.PRIMARY, session)
                commands("insert").last()["readConcern"] shouldBe BsonDocument("afterClusterTime", beforeTxn)
                session.abortTransaction()
            }
        }
    }

    test("a causally consistent session sends afterClusterTime with its reads once it saw an operation time; a snapshot session atClusterTime") {
        scripted(clusterTime = true) { c ->
            c.startSession().use { session ->
                c.runRetryableRead("db", find(), ReadPreference.PRIMARY, session)
                commands("find").last()["readConcern"] shouldBe BsonDocument("level", BsonString("local"))
                val time = session.operationTime
                time shouldNotBe null
                c.runRetryableWrite("db", insert(1), session)
                // writes too (causal-consistency.md: read and write commands), without a level
                commands("insert").last()["readConcern"] shouldBe BsonDocument("afterClusterTime", time!!)
                c.runRetryableRead("db", find(), ReadPreference.PRIMARY, session)
                commands("find").last()["readConcern"] shouldBe BsonDocument("level", BsonString("local")).append("afterClusterTime", session.operationTime!!)
                session.advanceOperationTime(BsonTimestamp(Int.MAX_VALUE, 1))
                session.operationTime shouldBe BsonTimestamp(Int.MAX_VALUE, 1)
            }
            c.startSession(ClientSessionOptions(causalConsistency = false)).use { session ->
                c.runRetryableRead("db", find(), ReadPreference.PRIMARY, session)
                c.runRetryableRead("db", find(), ReadPreference.PRIMARY, session)
                commands("find").last()["readConcern"] shouldBe BsonDocument("level", BsonString("local"))
            }
            script = { _, cmd ->
                if (cmd.firstKey == "find") Reply.Document(BsonDocument.parse("{cursor: {id: 0, ns: 'db.c', firstBatch: [], atClusterTime: Timestamp(42, 1)}, ok: 1}")) else null
            }
            c.startSession(ClientSessionOptions(snapshot = true)).use { session ->
                c.runRetryableRead("db", find(), ReadPreference.PRIMARY, session)
                commands("find").last()["readConcern"] shouldBe BsonDocument("level", BsonString("snapshot"))
                session.snapshotTime shouldBe BsonTimestamp(42, 1)
                c.runRetryableRead("db", find(), ReadPreference.PRIMARY, session)
                commands("find").last()["readConcern"] shouldBe BsonDocument("level", BsonString("snapshot")).append("atClusterTime", BsonTimestamp(42, 1))
            }
            shouldThrow<IllegalArgumentException> { ClientSessionOptions(causalConsistency = true, snapshot = true) }
        }
    }

    test("the first command of a transaction in a causally consistent session carries afterClusterTime") {
        scripted(clusterTime = true) { c ->
            c.startSession().use { session: ClientSession ->
                c.runRetryableWrite("db", insert(1), session)
                session.startTransaction(TransactionOptions(readConcernLevel = "majority"))
                c.runRetryableRead("db", find(), ReadPreference.PRIMARY, session)
                commands("find").last()["readConcern"] shouldBe BsonDocument("level", BsonString("majority")).append("afterClusterTime", session.operationTime!!)
                session.abortTransaction()
            }
        }
    }
    test("transactions.md \"When to unpin\": a retry of abortTransaction runs unpinned, and the end of a session unpins a committed transaction") {
        val server = WireServer.start()
        server.hello = { ctx, request -> DefaultHello.standalone(ctx, request).apply { put("msg", BsonString("isdbgrid")) } }
        val cluster = MongoCluster("mongodb://${server.address}/?serverSelectionTimeoutMS=2000")
        try {
            cluster.awaitTopology { t -> t.servers.values.any { it.type == ServerType.MONGOS } }
            val session = cluster.startSession()
            val pinnedAtAborts = Collections.synchronizedList(ArrayList<Any?>())
            server.handler = { _, _, cmd ->
                if (cmd.firstKey == "abortTransaction") {
                    pinnedAtAborts.add(session.pinnedServer)
                    if (pinnedAtAborts.size == 1) Reply.CloseConnection else Reply.Document(WireServer.ok())
                } else if (cmd.firstKey == "commitTransaction") Reply.Document(WireServer.ok()) else null
            }
            session.startTransaction()
            cluster.runRetryableWrite("db", insert(1), session)
            session.pinnedServer shouldBe server.address
            session.abortTransaction()
            pinnedAtAborts shouldBe listOf(server.address, null)
            session.startTransaction()
            cluster.runRetryableWrite("db", insert(2), session)
            session.commitTransaction()
            session.pinnedServer shouldBe server.address // committing does not unpin
            session.close()
            session.pinnedServer shouldBe null
        } finally {
            cluster.closeAndCheckNoCoroutines()
            server.close()
        }
    }
})
