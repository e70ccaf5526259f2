package dev.mooring.samples

import de.bwaldvogel.mongo.MongoServer
import de.bwaldvogel.mongo.backend.memory.MemoryBackend
import dev.mooring.cmap.ConnectionCheckedOutEvent
import dev.mooring.sdam.MongoCluster
import dev.mooring.driver.watch
import dev.mooring.sdam.withTransaction
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.async
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.map
import kotlinx.coroutines.flow.take
import kotlinx.coroutines.flow.toList
import org.bson.BsonValue
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.flow.filterIsInstance
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString
import java.io.PrintStream
import java.util.concurrent.atomic.AtomicInteger

/** What [kotlinSample] saw: the documents it read back and the events it collected. */
data class KotlinSampleResult(
    /** The `name`s of the documents the find returned, in `_id` order. */
    val names: List<String>,
    /** How many ConnectionCheckedOut events the pool-event collector saw. */
    val checkedOutEvents: Int,
    /** The server types of the topology the sample waited for (from the `topology` StateFlow, e.g. `Standalone`). */
    val serverTypes: List<String>,
)

/**
 * The Kotlin quick start: create a [MongoCluster] with the settings DSL, collect its events as
 * a `Flow` in a child coroutine, wait for the topology with a `StateFlow`, run commands with
 * the suspend API, then close. [out] gets what a user would see.
 */
suspend fun kotlinSample(host: String, port: Int, out: PrintStream = System.out): KotlinSampleResult = coroutineScope {
    val cluster = MongoCluster {
        hosts("$host:$port")
        directConnection = true
        heartbeatFrequencyMS = 500
        pool { maxPoolSize = 10 }
    }
    try {
        // Flow collection of events: a child coroutine, subscribed (UNDISPATCHED) before the first
        // operation so it sees that operation's checkout. A SharedFlow has no replay: events published
        // before a collector subscribes are not seen (pass listeners to the constructor for those).
        val checkedOut = AtomicInteger()
        val checkouts = launch(start = CoroutineStart.UNDISPATCHED) {
            cluster.poolEvents.filterIsInstance<ConnectionCheckedOutEvent>().collect {
                checkedOut.incrementAndGet()
                out.println("checked out connection #${it.connectionId} from ${it.address} after ${it.duration}")
            }
        }
        // The topology is a StateFlow: wait until a server is known.
        val topology = cluster.topology.first { t -> t.servers.values.any { it.type.isDataBearing } }
        out.println("topology ${topology.type.specName}: ${topology.servers.values.joinToString { "${it.address} ${it.type.specName}" }}")

        // The suspend API: insert three documents, read them back.
        val docs = listOf("ada", "grace", "barbara").mapIndexed { i, name ->
            BsonDocument("_id", BsonInt32(i)).append("name", BsonString(name))
        }
        cluster.runCommand("sample", BsonDocument("insert", BsonString("people")).append("documents", BsonArray(docs)))
        val reply = cluster.runCommand("sample", BsonDocument("find", BsonString("people")).append("sort", BsonDocument("_id", BsonInt32(1))))
        val names = reply.getDocument("cursor").getArray("firstBatch").map { it.asDocument().getString("name").value }
        out.println("found ${names.joinToString()}")
        out.println("pools: ${cluster.poolStatistics()}")

        cluster.closeSuspending()
        checkouts.cancel()
        KotlinSampleResult(names, checkedOut.get(), topology.servers.values.map { it.type.specName })
    } finally {
        cluster.closeSuspending()
    }
}

/**
 * The Kotlin quick start's transaction and change stream (they need a replica set or a sharded
 * cluster: mongo-java-server has neither; the test runs this on the test kit's replica set):
 * a `watch()` on the cluster prints the changes while `withTransaction` commits two inserts
 * together. Returns the `_id`s of the inserted documents as the change stream reported them.
 */
suspend fun kotlinTransactionSample(cluster: MongoCluster, out: PrintStream = System.out): List<BsonValue> = coroutineScope {
    // a change stream: a cold Flow of events that resumes by itself after an election;
    // cancelling its collector (here: take) kills the server cursor
    val changes = cluster.watch()
    val inserted = async(start = CoroutineStart.UNDISPATCHED) {
        changes.take(2).map { change ->
            out.println("change: ${change.operationType} ${change.ns} ${change.documentKey}")
            change.documentKey!!.getValue("_id")
        }.toList()
    }
    while (changes.resumeToken == null) delay(10) // the stream is open (only so that this sample sees both inserts)

    // a transaction: the commands given the session commit together; the block runs again on
    // TransientTransactionError, and the transaction is aborted when it throws or is cancelled
    cluster.withTransaction { session ->
        cluster.runRetryableWrite("bank", BsonDocument.parse("{insert: 'accounts', documents: [{_id: 'alice', balance: 100}]}"), session)
        cluster.runRetryableWrite("bank", BsonDocument.parse("{insert: 'accounts', documents: [{_id: 'bob', balance: 0}]}"), session)
    }
    inserted.await()
}

/** Runs [kotlinSample] against an embedded mongo-java-server, or against `host:port` given as the argument. */
fun main(args: Array<String>) {
    val embedded = if (args.isEmpty()) MongoServer(MemoryBackend()).also { it.bind("127.0.0.1", 0) } else null
    try {
        val (host, port) = if (embedded != null) "127.0.0.1" to embedded.localAddress.port
        else args[0].substringBeforeLast(':') to (args[0].substringAfterLast(':').toIntOrNull() ?: 27017)
        runBlocking { kotlinSample(host, port) }
    } finally {
        embedded?.shutdownNow()
    }
}
