package dev.mooring.driver.gridfs

import de.bwaldvogel.mongo.MongoServer
import de.bwaldvogel.mongo.backend.memory.MemoryBackend
import dev.mooring.cmap.CommandStartedEvent
import dev.mooring.driver.MongoDatabase
import dev.mooring.driver.database
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.testkit.EventRecorder
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.flowOf
import kotlinx.coroutines.flow.fold

/** A fresh mongo-java-server (in-memory) per test, its database `files`, and the commands sent to it. */
class GridFSFixture(val database: MongoDatabase, val recorder: EventRecorder) {
    val files get() = database.collection("fs.files")
    val chunks get() = database.collection("fs.chunks")

    fun started(name: String): List<CommandStartedEvent> = recorder.ofType<CommandStartedEvent>().filter { it.commandName == name }

    companion object {
        suspend fun run(block: suspend GridFSFixture.() -> Unit) {
            val server = MongoServer(MemoryBackend())
            server.bind("127.0.0.1", 0)
            val recorder = EventRecorder()
            val cluster = MongoCluster(MongoClusterSettings.fromUri("mongodb://127.0.0.1:${server.localAddress.port}/?serverSelectionTimeoutMS=5000"), listOf(recorder))
            try {
                GridFSFixture(cluster.database("files"), recorder).block()
            } finally {
                cluster.closeSuspending()
                server.shutdownNow()
            }
        }
    }
}

/** [size] bytes 0, 1, 2, … (mod 251: no period that divides a chunk size). */
fun bytes(size: Int): ByteArray = ByteArray(size) { (it % 251).toByte() }

fun source(vararg arrays: ByteArray): Flow<ByteArray> = flowOf(*arrays)

suspend fun Flow<ByteArray>.concat(): ByteArray = fold(ByteArray(0)) { acc, b -> acc + b }
