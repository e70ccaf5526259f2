package dev.mooring.driver

import dev.mooring.cmap.CommandStartedEvent
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.testkit.EventRecorder
import dev.mooring.testkit.server.DefaultHello
import dev.mooring.testkit.server.WireServer
import org.bson.BsonDocument
import org.bson.BsonInt32

/** A test kit [WireServer] (in-memory collections) and a cluster connected to it, recording every event. */
class WireServerFixture private constructor(val server: WireServer, val cluster: MongoCluster, val recorder: EventRecorder) {
    val db: MongoDatabase = cluster.database("test")

    /** The commands named [name] sent so far, as sent. */
    fun started(name: String): List<BsonDocument> = recorder.ofType<CommandStartedEvent>().filter { it.commandName == name }.map { it.command }

    /** The documents the server stores in `test.[collection]`, as stored. */
    suspend fun stored(collection: String): List<BsonDocument> =
        cluster.runCommand("test", BsonDocument.parse("""{find: "$collection", filter: {}}""")).getDocument("cursor").getArray("firstBatch").map { it.asDocument() }

    companion object {
        /**
         * Runs [block] against a fresh server; [limits] overrides the hello's size limits
         * (`maxWriteBatchSize`, `maxBsonObjectSize`, ...); [uriOptions] are appended to the URI;
         * [configure] runs before the cluster connects.
         */
        suspend fun withServer(
            limits: Map<String, Int> = emptyMap(),
            uriOptions: String = "",
            configure: (WireServer) -> Unit = {},
            block: suspend (WireServerFixture) -> Unit,
        ) {
            val server = WireServer.start()
            configure(server)
            if (limits.isNotEmpty()) {
                server.hello = { ctx, req -> DefaultHello.standalone(ctx, req).apply { limits.forEach { (k, v) -> put(k, BsonInt32(v)) } } }
            }
            val recorder = EventRecorder()
            val cluster = MongoCluster(MongoClusterSettings.fromUri("mongodb://${server.address}/?serverSelectionTimeoutMS=5000$uriOptions"), listOf(recorder))
            try {
                block(WireServerFixture(server, cluster, recorder))
            } finally {
                cluster.closeSuspending()
                server.close()
            }
        }
    }
}
