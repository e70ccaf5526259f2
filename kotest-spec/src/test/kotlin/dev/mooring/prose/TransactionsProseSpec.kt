package dev.mooring.prose

import dev.mooring.cmap.CommandStartedEvent
import dev.mooring.cmap.CommandSucceededEvent
import dev.mooring.driver.MongoWriteException
import dev.mooring.driver.ReadConcern
import dev.mooring.driver.database
import dev.mooring.sdam.ClientSessionOptions
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.sdam.MongoOperationTimeoutException
import dev.mooring.sdam.WriteAcknowledgement
import dev.mooring.sdam.WriteConcern
import dev.mooring.sdam.withTransaction
import dev.mooring.spec.ProseReport
import dev.mooring.testkit.EventRecorder
import dev.mooring.testkit.replset.ReplicaSetSimulator
import dev.mooring.testkit.server.WireServer
import dev.mooring.testkit.sharded.ShardedClusterSimulator
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldHaveSize
import io.kotest.matchers.ints.shouldBeGreaterThan
import io.kotest.matchers.shouldBe
import io.kotest.matchers.shouldNotBe
import io.kotest.matchers.types.shouldBeSameInstanceAs
import kotlinx.coroutines.flow.toList
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonTimestamp
import kotlin.time.Duration.Companion.seconds

/**
 * The prose tests of transactions.md, transactions-convenient-api.md and causal-consistency.md
 * (their tests/README.md, which is not in the shared spec texts: written from the specs' test
 * plans and the official prose tests), against the test kit's replica set, standalone and sharded
 * simulators. What sdam's own tests already cover on a scripted server is referenced, not repeated:
 * `WithTransactionSpec` (convenient-api prose 3 "Retry Timeout is Enforced" with its three cases on a
 * fake clock and the 120 s limit, prose "Retry Backoff is Enforced" on a fixed jitter, the abort on
 * cancellation in every phase), `TransactionSpec` (the state machine's misuse errors, commit retries with `w: majority`,
 * error labels, afterClusterTime on a transaction's first command), `SessionSpec` (lsid, dirty
 * sessions, endSession).
 */
class TransactionsProseSpec : FunSpec({
    extension(ProseReport("transactions-convenient-api") { it.startsWith("convenient-api prose") })
    extension(ProseReport("transactions") { it.startsWith("transactions prose") })
    extension(ProseReport("causal-consistency") { it.startsWith("causal-consistency prose") })
    timeout = 120.seconds.inWholeMilliseconds

    suspend fun replicaSet(block: suspend (ReplicaSetSimulator, MongoCluster, EventRecorder) -> Unit) {
        ReplicaSetSimulator.start(dataMembers = 1, clusterTime = true).use { rs ->
            val recorder = EventRecorder()
            val cluster = MongoCluster(MongoClusterSettings.fromUri(rs.seedUri("serverSelectionTimeoutMS=5000")), listOf(recorder))
            try {
                cluster.database("db").collection("coll").insertOne(BsonDocument("_id", BsonInt32(0)))
                recorder.clear()
                block(rs, cluster, recorder)
            } finally {
                cluster.closeSuspending()
            }
        }
    }

    /** A standalone that reports no cluster times (no `$clusterTime`, no `operationTime`). */
    suspend fun standalone(block: suspend (MongoCluster, EventRecorder) -> Unit) {
        WireServer.start().use { server ->
            val recorder = EventRecorder()
            val cluster = MongoCluster(MongoClusterSettings.fromUri("mongodb://${server.address}/?serverSelectionTimeoutMS=5000"), listOf(recorder))
            try {
                block(cluster, recorder)
            } finally {
                cluster.closeSuspending()
            }
        }
    }

    fun EventRecorder.started(name: String) = ofType<CommandStartedEvent>().filter { it.commandName == name }
    fun EventRecorder.lastReply(name: String) = ofType<CommandSucceededEvent>().last { it.commandName == name }.reply
    fun afterClusterTime(cmd: BsonDocument): BsonTimestamp? = (cmd["readConcern"] as? BsonDocument)?.get("afterClusterTime")?.asTimestamp()
    fun transient(command: String, code: Int, label: String) = BsonDocument.parse(
        "{configureFailPoint: 'failCommand', mode: 'alwaysOn', data: {failCommands: ['$command'], errorCode: $code, errorLabels: ['$label']}}",
    )

    // ---- transactions-convenient-api.md ----

    test("convenient-api prose 1: callback raises a custom error: withTransaction aborts and propagates it") {
        replicaSet { _, cluster, recorder ->
            val coll = cluster.database("db").collection("coll")
            val custom = IllegalStateException("custom error")
            val thrown = shouldThrow<IllegalStateException> {
                cluster.withTransaction { s ->
                    coll.insertOne(BsonDocument("_id", BsonInt32(1)), session = s)
                    throw custom
                }
            }
            thrown shouldBeSameInstanceAs custom
            recorder.started("abortTransaction") shouldHaveSize 1
            recorder.started("commitTransaction") shouldHaveSize 0
            coll.countDocuments(BsonDocument("_id", BsonInt32(1))) shouldBe 0L
        }
    }

    test("convenient-api prose 2: callback returns a value: withTransaction returns it") {
        replicaSet { _, cluster, recorder ->
            val coll = cluster.database("db").collection("coll")
            val value = cluster.withTransaction { s ->
                coll.insertOne(BsonDocument("_id", BsonInt32(2)), session = s)
                "Foo"
            }
            value shouldBe "Foo"
            recorder.started("commitTransaction") shouldHaveSize 1
            coll.countDocuments(BsonDocument("_id", BsonInt32(2))) shouldBe 1L
        }
    }

    // The 120 s limit itself, with the labels of the last error, runs on a fake clock in sdam's WithTransactionSpec
    // ("retries stop when the time limit passed" and the two commit cases): the internal clock hook is not visible
    // here, so these use CSOT's timeoutMS, which bounds the same retry loop (client-side-operations-timeout.md
    // "Convenient Transactions API"). Out of time, the timeout error is thrown; it carries the last error's labels
    // when the time ran out between attempts, none when it ran out in an operation: the label is checked only then.
    fun MongoOperationTimeoutException.shouldCarry(label: String) {
        if (cause is dev.mooring.cmap.MongoCommandException) hasErrorLabel(label) shouldBe true
    }

    test("convenient-api prose 3: retry timeout is enforced: the callback's TransientTransactionError") {
        replicaSet { rs, cluster, recorder ->
            rs.primary!!.configureFailPoint(transient("insert", 251, "TransientTransactionError"))
            val coll = cluster.database("db").collection("coll")
            val e = shouldThrow<MongoOperationTimeoutException> {
                cluster.withTransaction(timeoutMS = 300) { s -> coll.insertOne(BsonDocument("_id", BsonInt32(3)), session = s) }
            }
            e.shouldCarry("TransientTransactionError")
            recorder.started("insert").size shouldBeGreaterThan 1 // retried until the time ran out
        }
    }

    test("convenient-api prose 3: retry timeout is enforced: the commit's UnknownTransactionCommitResult") {
        replicaSet { rs, cluster, recorder ->
            rs.primary!!.configureFailPoint(transient("commitTransaction", 112, "UnknownTransactionCommitResult"))
            val coll = cluster.database("db").collection("coll")
            val e = shouldThrow<MongoOperationTimeoutException> {
                cluster.withTransaction(timeoutMS = 300) { s -> coll.insertOne(BsonDocument("_id", BsonInt32(4)), session = s) }
            }
            e.shouldCarry("UnknownTransactionCommitResult")
            recorder.started("commitTransaction").size shouldBeGreaterThan 1
            recorder.started("insert") shouldHaveSize 1 // the commit was retried, not the callback
        }
    }

    test("convenient-api prose 3: retry timeout is enforced: the commit's TransientTransactionError") {
        replicaSet { rs, cluster, recorder ->
            rs.primary!!.configureFailPoint(transient("commitTransaction", 251, "TransientTransactionError"))
            val coll = cluster.database("db").collection("coll")
            val e = shouldThrow<MongoOperationTimeoutException> {
                cluster.withTransaction(timeoutMS = 300) { s -> coll.insertOne(BsonDocument("_id", BsonInt32(5)), session = s) }
            }
            e.shouldCarry("TransientTransactionError")
            recorder.started("insert").size shouldBeGreaterThan 1 // the whole transaction was retried
        }
    }

    // ---- transactions.md ----

    test("transactions prose: options inside transaction 1: the collection's write concern is not inherited inside a transaction") {
        replicaSet { _, cluster, recorder ->
            val unacknowledged = cluster.database("db").collection("coll").withWriteConcern(WriteConcern(WriteAcknowledgement.Nodes(0)))
            cluster.withTransaction { s -> unacknowledged.insertOne(BsonDocument("_id", BsonInt32(6)), session = s) }
            recorder.started("insert").single().command.containsKey("writeConcern") shouldBe false
            cluster.database("db").collection("coll").countDocuments(BsonDocument("_id", BsonInt32(6))) shouldBe 1L
        }
    }

    suspend fun sharded(block: suspend (MongoCluster, EventRecorder) -> Unit) {
        ShardedClusterSimulator.start(count = 2, clusterTime = true).use { sc ->
            val recorder = EventRecorder()
            val uri = sc.seedUri("localThresholdMS=1000&serverSelectionTimeoutMS=5000", multiple = true)
            val cluster = MongoCluster(MongoClusterSettings.fromUri(uri), listOf(recorder))
            try {
                cluster.database("db").collection("coll").insertOne(BsonDocument("_id", BsonInt32(0)))
                recorder.clear()
                block(cluster, recorder)
            } finally {
                cluster.closeSuspending()
            }
        }
    }

    test("transactions prose: mongos pinning 1: starting a new transaction on a pinned session unpins it") {
        sharded { cluster, recorder ->
            val coll = cluster.database("db").collection("coll")
            cluster.startSession().use { s ->
                s.startTransaction()
                coll.insertOne(BsonDocument("_id", BsonInt32(1)), session = s)
                s.commitTransaction()
                s.pinnedServer shouldNotBe null // pinned until the next transaction starts
                recorder.clear()
                repeat(50) {
                    s.startTransaction()
                    coll.find(session = s).toList()
                    s.commitTransaction()
                }
            }
            recorder.started("find").map { it.address }.toSet().size shouldBeGreaterThan 1
        }
    }

    test("transactions prose: mongos pinning 2: a non-transaction operation on a pinned session unpins it") {
        sharded { cluster, recorder ->
            val coll = cluster.database("db").collection("coll")
            cluster.startSession().use { s ->
                s.startTransaction()
                coll.insertOne(BsonDocument("_id", BsonInt32(1)), session = s)
                s.commitTransaction()
                recorder.clear()
                repeat(50) { coll.find(session = s).toList() }
            }
            recorder.started("find").map { it.address }.toSet().size shouldBeGreaterThan 1
        }
    }

    // ---- causal-consistency.md "Test Plan" ----

    test("causal-consistency prose 1: a new session has no operationTime") {
        replicaSet { _, cluster, _ ->
            cluster.startSession().use { s -> s.operationTime shouldBe null }
        }
    }

    test("causal-consistency prose 2: the first read in a causally consistent session sends no afterClusterTime") {
        replicaSet { _, cluster, recorder ->
            cluster.startSession(ClientSessionOptions(causalConsistency = true)).use { s ->
                cluster.database("db").collection("coll").find(session = s).toList()
            }
            afterClusterTime(recorder.started("find").single().command) shouldBe null
        }
    }

    test("causal-consistency prose 3: the first read or write updates operationTime, even when it fails") {
        replicaSet { _, cluster, recorder ->
            val coll = cluster.database("db").collection("coll")
            cluster.startSession().use { s ->
                coll.find(session = s).toList()
                s.operationTime shouldBe recorder.lastReply("find").getTimestamp("operationTime")
            }
            cluster.startSession().use { s ->
                coll.insertOne(BsonDocument("_id", BsonInt32(7)), session = s)
                s.operationTime shouldBe recorder.lastReply("insert").getTimestamp("operationTime")
            }
            cluster.startSession().use { s ->
                shouldThrow<MongoWriteException> { coll.insertOne(BsonDocument("_id", BsonInt32(7)), session = s) } // duplicate key
                s.operationTime shouldBe recorder.lastReply("insert").getTimestamp("operationTime")
            }
        }
    }

    test("causal-consistency prose 4: a read after a find sends the find's operationTime as afterClusterTime") {
        replicaSet { _, cluster, recorder ->
            val coll = cluster.database("db").collection("coll")
            cluster.startSession().use { s ->
                for (second in listOf("find", "aggregate", "distinct")) {
                    coll.find(session = s).toList()
                    val time = s.operationTime
                    time shouldNotBe null
                    when (second) {
                        "find" -> coll.find(session = s).toList()
                        "aggregate" -> coll.aggregate(emptyList(), session = s).toList()
                        // the collection's distinct: a generic runCommand gets no afterClusterTime (causal-consistency.md)
                        else -> coll.distinct("_id", session = s)
                    }
                    afterClusterTime(recorder.started(second).last().command) shouldBe time
                }
            }
        }
    }

    test("causal-consistency prose 5: a find after a write, acknowledged or failed, sends the write's operationTime") {
        replicaSet { _, cluster, recorder ->
            val coll = cluster.database("db").collection("coll")
            cluster.startSession().use { s ->
                coll.insertOne(BsonDocument("_id", BsonInt32(8)), session = s)
                val afterWrite = recorder.lastReply("insert").getTimestamp("operationTime")
                coll.find(session = s).toList()
                afterClusterTime(recorder.started("find").last().command) shouldBe afterWrite
                shouldThrow<MongoWriteException> { coll.insertOne(BsonDocument("_id", BsonInt32(8)), session = s) }
                val afterError = recorder.lastReply("insert").getTimestamp("operationTime")
                coll.find(session = s).toList()
                afterClusterTime(recorder.started("find").last().command) shouldBe afterError
            }
        }
    }

    test("causal-consistency prose 6: a session that is not causally consistent sends no afterClusterTime") {
        replicaSet { _, cluster, recorder ->
            val coll = cluster.database("db").collection("coll")
            cluster.startSession(ClientSessionOptions(causalConsistency = false)).use { s ->
                coll.insertOne(BsonDocument("_id", BsonInt32(9)), session = s)
                coll.find(session = s).toList()
            }
            afterClusterTime(recorder.started("find").single().command) shouldBe null
        }
    }

    test("causal-consistency prose 7: against a deployment without cluster times, no afterClusterTime") {
        standalone { cluster, recorder ->
            val coll = cluster.database("db").collection("coll")
            cluster.startSession(ClientSessionOptions(causalConsistency = true)).use { s ->
                coll.insertOne(BsonDocument("_id", BsonInt32(1)), session = s)
                coll.find(session = s).toList()
            }
            afterClusterTime(recorder.started("find").single().command) shouldBe null
        }
    }

    test("causal-consistency prose 8: with the server's default read concern, readConcern has afterClusterTime only") {
        replicaSet { _, cluster, recorder ->
            val coll = cluster.database("db").collection("coll")
            cluster.startSession().use { s ->
                coll.find(session = s).toList()
                val time = s.operationTime!!
                coll.find(session = s).toList()
                recorder.started("find").last().command.getDocument("readConcern") shouldBe BsonDocument("afterClusterTime", time)
            }
        }
    }

    test("causal-consistency prose 9: with a custom read concern, readConcern has its level and afterClusterTime") {
        replicaSet { _, cluster, recorder ->
            val coll = cluster.database("db").collection("coll").withReadConcern(ReadConcern.LOCAL)
            cluster.startSession().use { s ->
                coll.find(session = s).toList()
                val time = s.operationTime!!
                coll.find(session = s).toList()
                val rc = recorder.started("find").last().command.getDocument("readConcern")
                rc.getString("level").value shouldBe "local"
                rc.getTimestamp("afterClusterTime") shouldBe time
                rc.keys shouldBe setOf("level", "afterClusterTime")
            }
        }
    }

    test("causal-consistency prose 10: an unacknowledged write does not update operationTime") {
        // driver-sessions.md: an explicit session is refused for an unacknowledged write, before anything is sent
        replicaSet { _, cluster, recorder ->
            val unacknowledged = cluster.database("db").collection("coll").withWriteConcern(WriteConcern(WriteAcknowledgement.Nodes(0)))
            cluster.startSession().use { s ->
                cluster.database("db").collection("coll").find(session = s).toList()
                val before = s.operationTime
                shouldThrow<IllegalArgumentException> { unacknowledged.insertOne(BsonDocument("_id", BsonInt32(10)), session = s) }
                s.operationTime shouldBe before
            }
            recorder.started("insert") shouldHaveSize 0
        }
    }

    test("causal-consistency prose 11: against a deployment with cluster times, commands carry \$clusterTime") {
        replicaSet { _, cluster, recorder ->
            cluster.database("db").collection("coll").find().toList()
            cluster.database("db").runCommand(BsonDocument("ping", BsonInt32(1)))
            recorder.started("ping").single().command.containsKey("\$clusterTime") shouldBe true
            recorder.started("find").single().command.containsKey("\$clusterTime") shouldBe true
        }
    }

    test("causal-consistency prose 12: against a deployment without cluster times, commands carry no \$clusterTime") {
        standalone { cluster, recorder ->
            cluster.database("db").collection("coll").find().toList()
            cluster.database("db").runCommand(BsonDocument("ping", BsonInt32(1)))
            recorder.ofType<CommandStartedEvent>().none { it.command.containsKey("\$clusterTime") } shouldBe true
        }
    }
})
