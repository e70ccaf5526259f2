package dev.mooring.bench.mooring

import dev.mooring.bench.workload.DocumentTaskOps
import dev.mooring.bench.workload.WorkloadTask
import dev.mooring.driver.MongoCollection
import dev.mooring.driver.MongoDatabase
import dev.mooring.driver.database
import dev.mooring.sdam.MongoCluster
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.flow.count
import kotlinx.coroutines.flow.firstOrNull
import kotlinx.coroutines.runBlocking
import org.bson.BsonDocument
import org.bson.BsonInt32

/**
 * A workload task through Mooring's collection API (`mooring-driver`, `BsonDocument`
 * collection), its callers on `Dispatchers.Default` as a Kotlin service's are. Mooring does not
 * add an `_id` to the caller's document (it sends one with the `_id` it generates).
 */
internal class MooringWorkload(task: WorkloadTask, target: String) : DocumentTaskOps(task, Dispatchers.Default) {
    private val cluster = MongoCluster(target)
    private val db: MongoDatabase = cluster.database(task.database)
    private val collection: MongoCollection<BsonDocument> = db.collection(task.collection)

    override val insertAddsId: Boolean get() = false

    override suspend fun dropDatabase() = db.drop()
    override suspend fun dropCollection() = collection.drop()
    override suspend fun createCollection() = db.createCollection(task.collection)
    override suspend fun insertOne(document: BsonDocument) {
        collection.insertOne(document)
    }

    override suspend fun insertMany(documents: List<BsonDocument>) {
        collection.insertMany(documents)
    }

    override suspend fun findOneById(id: Int): Boolean = collection.find(BsonDocument("_id", BsonInt32(id))).firstOrNull() != null
    override suspend fun findAll(): Int = collection.find().count()

    override fun close() = runBlocking { cluster.closeSuspending() }
}
