package dev.mooring.sdam.cluster

import dev.mooring.cmap.MongoCommandException
import dev.mooring.cmap.WaitQueueTimeoutException
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.RunCursorCommandOptions
import dev.mooring.testkit.server.DefaultHello
import dev.mooring.testkit.server.Reply
import dev.mooring.testkit.server.WireServer
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.flow.toList
import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonObjectId
import org.bson.BsonString
import org.bson.types.ObjectId
import java.util.Collections
import kotlin.time.Duration.Companion.seconds

/**
 * Transactions in load-balanced mode (load-balancers.md "Behaviour With Transactions",
 * transactions.md "When to unpin") against a scripted mongos behind a load balancer: the
 * transaction's commands, its commit and abort and a cursor opened in it share its first
 * command's connection, which stays checked out (counted as a transaction's) until the spec
 * says it is released.
 */
class LoadBalancedTransactionSpec : FunSpec({
    timeout = 60.seconds.inWholeMilliseconds

    /** A command the scripted server received, with the number of the connection it came on. */
    class Received(val connection: Int, val command: BsonDocument)

    class Scripted(val server: WireServer) {
        val received: MutableList<Received> = Collections.synchronizedList(ArrayList())
        @Volatile var script: (BsonDocument) -> Reply? = { null }

        fun commands(): List<String> = synchronized(received) { received.map { it.command.firstKey } }
        fun connections(): Set<Int> = synchronized(received) { received.map { it.connection }.toSet() }

        init {
            val serviceId = ObjectId()
            server.handler = { ctx, _, cmd ->
                if (ctx.commandName == "hello" || ctx.commandName.equals("isMaster", ignoreCase = true)) {
                    Reply.Document(DefaultHello.standalone(ctx, cmd).append("serviceId", BsonObjectId(serviceId)).append("msg", BsonString("isdbgrid")))
                } else {
                    received.add(Received(ctx.connectionNumber, cmd))
                    script(cmd) ?: Reply.Document(WireServer.ok())
                }
            }
        }
    }

    suspend fun scripted(uriOptions: String = "", block: suspend Scripted.(MongoCluster) -> Unit) {
        val server = WireServer.start()
        val s = Scripted(server)
        val cluster = MongoCluster("mongodb://${server.address}/?loadBalanced=true&serverSelectionTimeoutMS=2000$uriOptions")
        try {
            s.block(cluster)
        } finally {
            cluster.closeAndCheckNoCoroutines()
            server.close()
        }
    }

    fun MongoCluster.inUse(): Int = poolStatistics().values.sumOf { it.inUseConnections }
    fun insert(id: Int) = BsonDocument.parse("{insert: 'c', documents: [{_id: $id}]}")
    fun error(code: Int, vararg labels: String) = Reply.Document(
        WireServer.error(code, "Code$code", "scripted error").apply { if (labels.isNotEmpty()) put("errorLabels", BsonArray(labels.map { BsonString(it) })) },
    )

    test("a transaction's commands and its commits go over its first command's connection, kept checked out until a new transaction starts") {
        scripted { c ->
            c.startSession().use { session ->
                session.startTransaction()
                c.runRetryableWrite("db", insert(1), session)
                c.inUse() shouldBe 1
                c.runRetryableWrite("db", insert(2), session)
                c.runCommand("db", BsonDocument.parse("{count: 'c'}"), session = session)
                session.commitTransaction()
                c.inUse() shouldBe 1 // transactions.md: committing does not unpin (commit may be called again)
                session.commitTransaction()
                c.inUse() shouldBe 1
                session.pinnedServer shouldBe null // a load balancer is no mongos to select: the connection is pinned instead
                commands() shouldBe listOf("insert", "insert", "count", "commitTransaction", "commitTransaction")
                connections().size shouldBe 1
                session.startTransaction()
                c.inUse() shouldBe 0
            }
        }
    }

    test("a non-transient error keeps the connection pinned; a TransientTransactionError, an abort, an operation outside the transaction and the session's end release it") {
        scripted { c ->
            c.startSession().use { session ->
                session.startTransaction()
                script = { cmd -> if (cmd.firstKey == "insert") error(51) else null }
                shouldThrow<MongoCommandException> { c.runRetryableWrite("db", insert(1), session) }
                c.inUse() shouldBe 1
                script = { cmd -> if (cmd.firstKey == "commitTransaction") error(51) else null }
                shouldThrow<MongoCommandException> { session.commitTransaction() }
                c.inUse() shouldBe 1
                script = { null }
                session.commitTransaction()
                c.inUse() shouldBe 1
                c.runRetryableWrite("db", insert(2), session) // outside a transaction: the committed one's connection goes back first
                c.inUse() shouldBe 0

                session.startTransaction()
                script = { cmd -> if (cmd.firstKey == "insert") error(24, "TransientTransactionError") else null }
                shouldThrow<MongoCommandException> { c.runRetryableWrite("db", insert(3), session) }
                c.inUse() shouldBe 0
                script = { null }
                session.abortTransaction()
                c.inUse() shouldBe 0

                session.startTransaction()
                c.runRetryableWrite("db", insert(4), session)
                c.inUse() shouldBe 1
                session.abortTransaction()
                c.inUse() shouldBe 0

                session.startTransaction()
                c.runRetryableWrite("db", insert(5), session)
                session.commitTransaction()
                c.inUse() shouldBe 1
            }
            c.inUse() shouldBe 0 // the session's end
        }
    }

    test("a network error on commit releases the connection and the retry runs unpinned; so does a network error on abort") {
        scripted { c ->
            c.startSession().use { session ->
                session.startTransaction()
                c.runRetryableWrite("db", insert(1), session)
                var failed = false
                script = { cmd -> if (cmd.firstKey == "commitTransaction" && !failed) Reply.CloseConnection.also { failed = true } else null }
                session.commitTransaction()
                c.inUse() shouldBe 0
                session.startTransaction()
                c.runRetryableWrite("db", insert(2), session)
                failed = false
                script = { cmd -> if (cmd.firstKey == "abortTransaction" && !failed) Reply.CloseConnection.also { failed = true } else null }
                session.abortTransaction()
                c.inUse() shouldBe 0
                commands() shouldBe listOf("insert", "commitTransaction", "commitTransaction", "insert", "abortTransaction", "abortTransaction")
            }
        }
    }

    test("a cursor opened in a transaction shares its connection, which the cursor's end leaves to the transaction") {
        scripted { c ->
            script = { cmd ->
                when (cmd.firstKey) {
                    "find" -> Reply.Document(BsonDocument.parse("{cursor: {id: NumberLong(42), ns: 'db.c', firstBatch: [{_id: 1}]}, ok: 1}"))
                    "getMore" -> Reply.Document(BsonDocument.parse("{cursor: {id: NumberLong(0), ns: 'db.c', nextBatch: [{_id: 2}]}, ok: 1}"))
                    else -> null
                }
            }
            c.startSession().use { session ->
                session.startTransaction()
                c.runRetryableWrite("db", insert(1), session)
                val docs = c.runCursorCommand("db", BsonDocument.parse("{find: 'c', batchSize: 1}"), RunCursorCommandOptions(session = session)).toList()
                docs.size shouldBe 2
                c.inUse() shouldBe 1
                c.poolStatistics().values.sumOf { it.pinnedToCursors } shouldBe 0
                session.abortTransaction()
                c.inUse() shouldBe 0
            }
            commands() shouldBe listOf("insert", "find", "getMore", "abortTransaction")
            connections().size shouldBe 1
        }
    }

    test("with the pool's only connection pinned to a transaction, a wait queue timeout counts it as a transaction's") {
        scripted("&maxPoolSize=1&waitQueueTimeoutMS=50") { c ->
            c.startSession().use { session ->
                session.startTransaction()
                c.runRetryableWrite("db", insert(1), session)
                val e = shouldThrow<WaitQueueTimeoutException> { c.runRetryableWrite("db", insert(2)) }
                e.message shouldContain "connections in use by cursors: 0, connections in use by transactions: 1, connections in use by other operations: 0"
                session.abortTransaction()
            }
        }
    }
})
