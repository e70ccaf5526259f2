package dev.mooring.samples

import de.bwaldvogel.mongo.MongoServer
import de.bwaldvogel.mongo.backend.memory.MemoryBackend
import dev.mooring.cmap.ConnectionCheckedOutEvent
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.ServerDescriptionChangedEvent
import kotlinx.coroutines.CoroutineStart
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
    /** The server types the server-event collector saw the server take (e.g. `Standalone`). */
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
        // Flow collection of events: a child coroutine, started before the first operation so it sees it.
        val checkedOut = AtomicInteger()
        val checkouts = launch(start = CoroutineStart.UNDISPATCHED) {
            cluster.poolEvents.filterIsInstance<ConnectionCheckedOutEvent>().collect {
                checkedOut.incrementAndGet()
                out.println("checked out connection #${it.connectionId} from ${it.address} after ${it.duration}")
            }
        }
        val serverTypes = mutableListOf<String>()
        val serverWatcher = launch(start = CoroutineStart.UNDISPATCHED) {
            cluster.serverEvents.filterIsInstance<ServerDescriptionChangedEvent>().collect {
                synchronized(serverTypes) { serverTypes += it.newDescription.type.specName }
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
        serverWatcher.cancel()
        checkouts.cancel()
        KotlinSampleResult(names, checkedOut.get(), synchronized(serverTypes) { serverTypes.toList() })
    } finally {
        cluster.closeSuspending()
    }
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
