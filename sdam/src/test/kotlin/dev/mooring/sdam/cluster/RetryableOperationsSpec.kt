package dev.mooring.sdam.cluster

import dev.mooring.cmap.MongoCommandException
import dev.mooring.cmap.MongoNetworkException
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.ServerType
import dev.mooring.testkit.server.DefaultHello
import dev.mooring.testkit.server.Reply
import dev.mooring.testkit.server.WireServer
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.shouldNotBe
import io.kotest.matchers.types.shouldBeInstanceOf
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.async
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.withTimeout
import org.bson.BsonArray
import org.bson.BsonBoolean
import org.bson.BsonDocument
import org.bson.BsonInt64
import org.bson.BsonString
import java.util.Collections
import kotlin.coroutines.cancellation.CancellationException
import kotlin.time.Duration.Companion.seconds

/**
 * MongoCluster.runRetryableWrite / runRetryableRead against a scripted server: what each attempt
 * sends, when the one retry happens and which error is surfaced.
 */
class RetryableOperationsSpec : FunSpec({
    timeout = 120.seconds.inWholeMilliseconds

    /** A server whose every request is recorded and first answered by [script] (null: the built-ins). */
    class Scripted(val server: WireServer, val standalone: Boolean) {
        val received: MutableList<BsonDocument> = Collections.synchronizedList(ArrayList())
        @Volatile var script: suspend (attempt: Int, BsonDocument) -> Reply? = { _, _ -> null }

        fun commands(name: String): List<BsonDocument> = synchronized(received) { received.filter { it.firstKey == name } }

        init {
            server.handler = { _, _, cmd ->
                val name = cmd.firstKey
                if (name == "hello" || name == "isMaster" || name == "ismaster") {
                    null
                } else {
                    received.add(cmd)
                    script(commands(name).size, cmd)
                }
            }
        }
    }

    /** A single server that presents itself as a replica set primary (retryable writes supported) unless [standalone]. */
    suspend fun scripted(standalone: Boolean = false): Scripted {
        val server = WireServer.start()
        if (!standalone) {
            server.hello = { ctx, request ->
                DefaultHello.standalone(ctx, request).apply {
                    put("setName", BsonString("rs0"))
                    put("hosts", BsonArray(listOf(BsonString(server.address.toString()))))
                    put("secondary", BsonBoolean.FALSE)
                }
            }
        }
        return Scripted(server, standalone)
    }

    suspend fun <T> Scripted.cluster(options: String = "", block: suspend (MongoCluster) -> T): T {
        val cluster = MongoCluster("mongodb://${server.address}/?directConnection=true&serverSelectionTimeoutMS=5000$options")
        try {
            val type = cluster.awaitTopology { t -> t.servers.values.any { it.type != ServerType.UNKNOWN } }.servers.values.single().type
            type shouldBe if (standalone) ServerType.STANDALONE else ServerType.RS_PRIMARY
            return block(cluster)
        } finally {
            cluster.closeAndCheckNoCoroutines()
            server.close()
        }
    }

    fun insert(id: Int) = BsonDocument.parse("{insert: 'c', documents: [{_id: $id}]}")
    fun error(code: Int, vararg labels: String) = Reply.Document(
        WireServer.error(code, "Code$code", "scripted error").apply { if (labels.isNotEmpty()) put("errorLabels", BsonArray(labels.map { BsonString(it) })) },
    )

    test("a write that hits a network error is retried once with the same lsid and txnNumber") {
        val s = scripted()
        s.script = { attempt, _ -> if (attempt == 1) Reply.CloseConnection else null }
        s.cluster { c ->
            c.runRetryableWrite("app", insert(1)).getInt32("n").value shouldBe 1
        }
        val sent = s.commands("insert")
        sent.size shouldBe 2
        sent[0]["lsid"] shouldNotBe null
        sent[0]["lsid"] shouldBe sent[1]["lsid"]
        sent[0]["txnNumber"] shouldBe BsonInt64(1)
        sent[1]["txnNumber"] shouldBe BsonInt64(1)
        s.server.collections.documents("app", "c").size shouldBe 1
    }

    test("when the retry fails too, the retry's error is surfaced") {
        val s = scripted()
        s.script = { attempt, _ -> if (attempt == 1) Reply.CloseConnection else error(262) }
        s.cluster { c ->
            val e = shouldThrow<MongoCommandException> { c.runRetryableWrite("app", insert(1)) }
            e.code shouldBe 262
            e.hasErrorLabel("RetryableWriteError") shouldBe true // the server labels it (4.4+ behaviour of the test kit)
            e.suppressed.single().shouldBeInstanceOf<MongoNetworkException>()
        }
        s.commands("insert").size shouldBe 2
    }

    test("a retry that fails with NoWritesPerformed surfaces the first error") {
        val s = scripted()
        s.script = { attempt, _ -> if (attempt == 1) error(262) else error(262, "RetryableWriteError", "NoWritesPerformed") }
        s.cluster { c ->
            val e = shouldThrow<MongoCommandException> { c.runRetryableWrite("app", insert(1)) }
            e.hasErrorLabel("NoWritesPerformed") shouldBe false
            e.suppressed.single().shouldBeInstanceOf<MongoCommandException>().hasErrorLabel("NoWritesPerformed") shouldBe true
        }
        s.commands("insert").size shouldBe 2
    }

    test("errors that are not retryable are not retried") {
        val s = scripted()
        s.script = { _, _ -> error(2) }
        s.cluster { c ->
            shouldThrow<MongoCommandException> { c.runRetryableWrite("app", insert(1)) }.code shouldBe 2
        }
        s.commands("insert").size shouldBe 1
    }

    test("a retryable write concern error is retried; the final reply is returned, not thrown") {
        val s = scripted()
        val wce = BsonDocument.parse("{code: 91, errmsg: 'shutting down'}")
        s.script = { attempt, _ ->
            if (attempt == 1) Reply.Document(BsonDocument.parse("{ok: 1, n: 1}").append("writeConcernError", wce)) else null
        }
        s.cluster { c ->
            val reply = c.runRetryableWrite("app", insert(1))
            reply.containsKey("writeConcernError") shouldBe false
        }
        s.commands("insert").size shouldBe 2
    }

    test("a standalone gets no txnNumber (only its implicit session's lsid), and a network error is not retried") {
        val s = scripted(standalone = true)
        s.script = { attempt, _ -> if (attempt == 1) Reply.CloseConnection else null }
        s.cluster { c ->
            shouldThrow<MongoNetworkException> { c.runRetryableWrite("app", insert(1)) }
            c.runRetryableWrite("app", insert(2))
        }
        s.commands("insert").size shouldBe 2 // the failed one and the next operation: no retry
        s.commands("insert").forEach { it.containsKey("txnNumber") shouldBe false }
    }

    test("retryWrites=false sends no txnNumber and retries nothing") {
        val s = scripted()
        s.script = { attempt, _ -> if (attempt == 1) Reply.CloseConnection else null }
        s.cluster("&retryWrites=false") { c ->
            shouldThrow<MongoNetworkException> { c.runRetryableWrite("app", insert(1)) }
        }
        s.commands("insert").single().containsKey("txnNumber") shouldBe false
    }

    test("sessions are reused with a new txnNumber, and replaced after a network error") {
        val s = scripted()
        s.script = { attempt, _ -> if (attempt == 3) Reply.CloseConnection else null }
        s.cluster { c ->
            c.runRetryableWrite("app", insert(1))
            c.runRetryableWrite("app", insert(2))
            c.runRetryableWrite("app", insert(3)) // attempt 3 fails, attempt 4 is its retry
            c.runRetryableWrite("app", insert(4))
        }
        val sent = s.commands("insert")
        sent.map { it["txnNumber"] } shouldBe listOf(1L, 2L, 3L, 3L, 1L).map { BsonInt64(it) }
        sent[1]["lsid"] shouldBe sent[0]["lsid"]
        sent[3]["lsid"] shouldBe sent[0]["lsid"]
        sent[4]["lsid"] shouldNotBe sent[0]["lsid"] // the session saw a network error: discarded
    }

    test("a read is retried once on a network error, and not at all with retryReads=false") {
        val s = scripted()
        s.script = { attempt, _ -> if (attempt == 1 || attempt == 3) Reply.CloseConnection else null }
        s.cluster { c ->
            c.runRetryableRead("app", BsonDocument.parse("{find: 'c', filter: {}}")).getInt32("ok").value shouldBe 1
        }
        s.commands("find").size shouldBe 2
        s.commands("find").forEach { it.containsKey("txnNumber") shouldBe false }

        val off = scripted()
        off.script = { _, _ -> Reply.CloseConnection }
        off.cluster("&retryReads=false") { c ->
            shouldThrow<MongoNetworkException> { c.runRetryableRead("app", BsonDocument.parse("{find: 'c', filter: {}}")) }
        }
        off.commands("find").size shouldBe 1
    }

    test("cancelling the caller during the retry cancels it: no third attempt, nothing leaks") {
        val s = scripted()
        val retrying = CompletableDeferred<Unit>()
        s.script = { attempt, _ ->
            when (attempt) {
                1 -> Reply.CloseConnection
                2 -> {
                    retrying.complete(Unit)
                    Reply.Delayed(600_000, Reply.CloseConnection) // the retry hangs until the client goes away
                }
                else -> null
            }
        }
        s.cluster { c ->
            coroutineScope {
                val write = async(start = CoroutineStart.UNDISPATCHED) { c.runRetryableWrite("app", insert(1)) }
                withTimeout(20.seconds) { retrying.await() }
                write.cancel()
                shouldThrow<CancellationException> { write.await() }
            }
            s.commands("insert").size shouldBe 2 // the operation has ended: a third attempt could only have come before
            withTimeout(20.seconds) { while (c.poolStatistics().values.sumOf { it.inUseConnections } != 0) delay(10) }
            c.runRetryableWrite("app", insert(2)).getInt32("n").value shouldBe 1 // the cluster is fine afterwards
        }
    }
})
