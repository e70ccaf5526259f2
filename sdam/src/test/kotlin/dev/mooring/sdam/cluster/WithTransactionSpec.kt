package dev.mooring.sdam.cluster

import dev.mooring.cmap.MongoCommandException
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.ServerType
import dev.mooring.sdam.TransactionOptions
import dev.mooring.sdam.TransactionState
import dev.mooring.sdam.internal.session.ConvenientTransaction
import dev.mooring.sdam.withTransaction
import dev.mooring.testkit.server.DefaultHello
import dev.mooring.testkit.server.Reply
import dev.mooring.testkit.server.WireServer
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.withTimeout
import org.bson.BsonArray
import org.bson.BsonBoolean
import org.bson.BsonDocument
import org.bson.BsonString
import java.util.Collections
import java.util.concurrent.atomic.AtomicInteger
import kotlin.random.Random
import kotlin.time.Duration.Companion.seconds

/**
 * withTransaction (transactions-convenient-api.md) against a scripted replica set primary: the
 * retry loop, its time limit (on a fake clock) and the abort when the callback throws or the
 * caller is cancelled, in each phase (callback, an operation in flight, backoff, commit, commit retry).
 */
class WithTransactionSpec : FunSpec({
    timeout = 120.seconds.inWholeMilliseconds

    class Scripted(val server: WireServer) {
        val received: MutableList<BsonDocument> = Collections.synchronizedList(ArrayList())
        @Volatile var script: suspend (attempt: Int, BsonDocument) -> Reply? = { _, _ -> null }

        fun commands(name: String): List<BsonDocument> = synchronized(received) { received.filter { it.firstKey == name } }

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

    suspend fun <T> scripted(block: suspend Scripted.(MongoCluster) -> T): T {
        val server = WireServer.start()
        val s = Scripted(server)
        val cluster = MongoCluster("mongodb://${server.address}/?directConnection=true&serverSelectionTimeoutMS=2000")
        try {
            cluster.awaitTopology { t -> t.servers.values.any { it.type == ServerType.RS_PRIMARY } }
            return s.block(cluster)
        } finally {
            cluster.closeAndCheckNoCoroutines()
            server.close()
        }
    }

    fun insert(id: Int) = BsonDocument.parse("{insert: 'c', documents: [{_id: $id}]}")
    fun error(code: Int, vararg labels: String) = Reply.Document(
        WireServer.error(code, "Code$code", "scripted error").apply { if (labels.isNotEmpty()) put("errorLabels", BsonArray(labels.map { BsonString(it) })) },
    )

    test("the callback's result is returned after one commit") {
        scripted { c ->
            c.withTransaction { s -> c.runRetryableWrite("db", insert(1), s); 42 } shouldBe 42
            commands("insert").single()["startTransaction"] shouldBe BsonBoolean.TRUE
            commands("commitTransaction").size shouldBe 1
            commands("abortTransaction").size shouldBe 0
        }
    }

    test("a callback error aborts and propagates as is; a callback that commits itself is not committed again") {
        scripted { c ->
            val calls = AtomicInteger()
            shouldThrow<IllegalStateException> {
                c.withTransaction<Unit> { s -> calls.incrementAndGet(); c.runRetryableWrite("db", insert(1), s); error("boom") }
            }
            calls.get() shouldBe 1
            commands("abortTransaction").size shouldBe 1
            commands("commitTransaction").size shouldBe 0
            c.startSession().use { session ->
                session.withTransaction { s -> c.runRetryableWrite("db", insert(2), s); s.commitTransaction() }
                session.transactionState shouldBe TransactionState.Committed
            }
            commands("commitTransaction").size shouldBe 1
        }
    }

    test("a TransientTransactionError in the callback or the commit retries the whole transaction; UnknownTransactionCommitResult the commit") {
        scripted { c ->
            script = { n, cmd ->
                when {
                    cmd.firstKey == "insert" && n == 1 -> error(112, "TransientTransactionError")
                    cmd.firstKey == "commitTransaction" && n == 1 -> error(251, "TransientTransactionError")
                    cmd.firstKey == "commitTransaction" && n in 2..3 -> Reply.CloseConnection // one commit and its retry: unknown result
                    else -> null
                }
            }
            val calls = AtomicInteger()
            c.withTransaction(TransactionOptions()) { s -> calls.incrementAndGet(); c.runRetryableWrite("db", insert(1), s) }
            calls.get() shouldBe 3 // transient insert, transient commit, then success
            commands("abortTransaction").size shouldBe 1 // the callback's failure only
            commands("commitTransaction").size shouldBe 4 // transient; unknown (and its retry); the retry loop's commit
            commands("insert").map { it["txnNumber"] }.distinct().size shouldBe 3
        }
    }

    test("retries stop when the time limit passed; the last error is thrown as is without timeoutMS") {
        scripted { c ->
            script = { _, cmd -> if (cmd.firstKey == "insert") error(112, "TransientTransactionError") else null }
            var now = 0L
            c.startSession().use { session ->
                val loop = ConvenientTransaction(session, TransactionOptions(), null, { s ->
                    now += 50_000_000_000 // each attempt takes 50 s
                    c.runRetryableWrite("db", insert(1), s)
                }, nanoTime = { now }, random = Random(1), sleep = {})
                shouldThrow<MongoCommandException> { loop.run() }.code shouldBe 112
            }
            commands("insert").size shouldBe 3 // 50 s, 100 s, 150 s: the third is past 120 s
            commands("abortTransaction").size shouldBe 3
        }
    }

    // transactions-convenient-api prose test 3 ("Retry Timeout is Enforced"), its two commit cases on the fake clock
    test("retries of a commit failing with UnknownTransactionCommitResult stop at the time limit; the error keeps its label") {
        scripted { c ->
            var now = 0L
            script = { _, cmd ->
                if (cmd.firstKey == "commitTransaction") {
                    now += 50_000_000_000 // each commit takes 50 s
                    error(112, "UnknownTransactionCommitResult")
                } else {
                    null
                }
            }
            c.startSession().use { session ->
                val loop = ConvenientTransaction(session, TransactionOptions(), null, { s -> c.runRetryableWrite("db", insert(1), s) }, nanoTime = { now }, random = Random(1), sleep = {})
                val e = shouldThrow<MongoCommandException> { loop.run() }
                e.code shouldBe 112
                e.hasErrorLabel("UnknownTransactionCommitResult") shouldBe true
            }
            commands("insert").size shouldBe 1 // the commit is retried, not the callback
            commands("commitTransaction").size shouldBe 3 // 50 s, 100 s, 150 s: the third is past 120 s
        }
    }

    test("retries of a transaction whose commit fails with TransientTransactionError stop at the time limit; the error keeps its label") {
        scripted { c ->
            var now = 0L
            script = { _, cmd ->
                if (cmd.firstKey == "commitTransaction") {
                    now += 50_000_000_000
                    error(251, "TransientTransactionError")
                } else {
                    null
                }
            }
            c.startSession().use { session ->
                val loop = ConvenientTransaction(session, TransactionOptions(), null, { s -> c.runRetryableWrite("db", insert(1), s) }, nanoTime = { now }, random = Random(1), sleep = {})
                val e = shouldThrow<MongoCommandException> { loop.run() }
                e.code shouldBe 251
                e.hasErrorLabel("TransientTransactionError") shouldBe true
            }
            commands("insert").size shouldBe 3 // the whole transaction is retried
            commands("commitTransaction").size shouldBe 3
        }
    }

    // transactions-convenient-api prose "Retry Backoff is Enforced", on the injected jitter and sleep instead of wall time
    test("each retry sleeps jitter * min(5 ms * 1.5^attempt, 500 ms) first: nothing with jitter 0, the full backoff with jitter ~1") {
        for ((jitter, expected) in listOf(0.0 to listOf(0L, 0L, 0L), Math.nextDown(1.0) to listOf(7L, 11L, 16L))) {
            scripted { c ->
                script = { attempt, cmd -> if (cmd.firstKey == "commitTransaction" && attempt <= 3) error(251, "TransientTransactionError") else null }
                val slept = ArrayList<Long>()
                val fixed = object : Random() {
                    override fun nextBits(bitCount: Int): Int = 0
                    override fun nextDouble(): Double = jitter
                }
                c.startSession().use { session ->
                    ConvenientTransaction(session, TransactionOptions(), null, { s -> c.runRetryableWrite("db", insert(1), s) }, random = fixed, sleep = { slept += it }).run()
                }
                slept shouldBe expected
                commands("commitTransaction").size shouldBe 4
            }
        }
    }

    test("cancelled while the callback waits, or while its operation is in flight, the transaction is aborted") {
        scripted { c ->
            coroutineScope {
                val inserted = CompletableDeferred<Unit>()
                val job = launch {
                    c.withTransaction { s -> c.runRetryableWrite("db", insert(1), s); inserted.complete(Unit); awaitCancellation() }
                }
                inserted.await()
                job.cancelAndJoin()
            }
            commands("abortTransaction").size shouldBe 1
            val arrived = CompletableDeferred<Unit>()
            script = { n, cmd -> if (cmd.firstKey == "insert" && n == 3) { arrived.complete(Unit); awaitCancellation() } else null }
            coroutineScope {
                val job = launch { c.withTransaction { s -> c.runRetryableWrite("db", insert(2), s); c.runRetryableWrite("db", insert(3), s) } }
                arrived.await()
                job.cancelAndJoin()
            }
            withTimeout(10.seconds) { while (commands("abortTransaction").size < 2) delay(10) }
            commands("commitTransaction").size shouldBe 0
        }
    }

    test("cancelled during the backoff before a retry, nothing more is started") {
        scripted { c ->
            script = { _, cmd -> if (cmd.firstKey == "insert") error(112, "TransientTransactionError") else null }
            c.startSession().use { session ->
                coroutineScope {
                    val sleeping = CompletableDeferred<Unit>()
                    val job = launch(start = CoroutineStart.UNDISPATCHED) {
                        ConvenientTransaction(session, TransactionOptions(), null, { s -> c.runRetryableWrite("db", insert(1), s) },
                            sleep = { sleeping.complete(Unit); awaitCancellation() }).run()
                    }
                    sleeping.await()
                    job.cancelAndJoin()
                }
                session.transactionState shouldBe TransactionState.Aborted
            }
            commands("insert").size shouldBe 1
            commands("abortTransaction").size shouldBe 1
        }
    }

    test("cancelled during the commit or its retry, no abort is sent (the commit may have applied) and the call ends") {
        for (blockedCommit in listOf(1, 2)) {
            scripted { c ->
                val arrived = CompletableDeferred<Unit>()
                script = { n, cmd ->
                    when {
                        cmd.firstKey != "commitTransaction" -> null
                        n == blockedCommit -> { arrived.complete(Unit); awaitCancellation() }
                        else -> Reply.CloseConnection // the first commit fails: the second is the retry
                    }
                }
                coroutineScope {
                    val job = launch { c.withTransaction { s -> c.runRetryableWrite("db", insert(1), s) } }
                    arrived.await()
                    job.cancelAndJoin()
                }
                commands("commitTransaction").size shouldBe blockedCommit
                commands("abortTransaction").size shouldBe 0
            }
        }
    }
})
