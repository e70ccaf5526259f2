package dev.mooring.bench.mooring

import dev.mooring.bench.workload.BulkOp
import dev.mooring.bench.workload.DocumentTaskOps
import dev.mooring.bench.workload.PreparedBulkWrite
import dev.mooring.bench.workload.WorkloadTask
import dev.mooring.driver.BulkWriteResult
import dev.mooring.driver.ClientBulkWriteResult
import dev.mooring.driver.ClientNamespacedWriteModel
import dev.mooring.driver.MongoCollection
import dev.mooring.driver.MongoDatabase
import dev.mooring.driver.WriteModel
import dev.mooring.driver.bulkWrite
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
internal class MooringWorkload(task: WorkloadTask, target: String, operations: Int = task.operations) : DocumentTaskOps(task, Dispatchers.Default, operations) {
    private val cluster = MongoCluster(target)
    private val db: MongoDatabase = cluster.database(task.database)
    private val collection: MongoCollection<BsonDocument> = db.collection(task.collection)

    override val insertAddsId: Boolean get() = false

    override suspend fun dropDatabase() = db.drop()
    override suspend fun dropCollection() = collection.drop()
    override suspend fun createCollection(name: String) = db.createCollection(name)
    override suspend fun insertOne(document: BsonDocument) {
        collection.insertOne(document)
    }

    override suspend fun insertMany(documents: List<BsonDocument>) {
        collection.insertMany(documents)
    }

    override suspend fun findOneById(id: Int): Boolean = collection.find(BsonDocument("_id", BsonInt32(id))).firstOrNull() != null
    override suspend fun findAll(): Int = collection.find().count()

    override fun collectionBulkWrite(ops: List<BulkOp>): PreparedBulkWrite {
        val models = ops.map(::model)
        return PreparedBulkWrite {
            when (val r = collection.bulkWrite(models)) {
                is BulkWriteResult.Acknowledged -> r.insertedCount + r.matchedCount + r.deletedCount
                is BulkWriteResult.Unacknowledged -> error("an acknowledged write concern was expected")
            }
        }
    }

    override fun clientBulkWrite(ops: List<BulkOp>): PreparedBulkWrite {
        val models = ops.map { ClientNamespacedWriteModel.of("${task.database}.${it.collection}", model(it)) }
        return PreparedBulkWrite {
            when (val r = cluster.bulkWrite(models)) {
                is ClientBulkWriteResult.Acknowledged -> r.insertedCount + r.matchedCount + r.deletedCount
                ClientBulkWriteResult.Unacknowledged -> error("an acknowledged write concern was expected")
            }
        }
    }

    private fun model(op: BulkOp): WriteModel<BsonDocument> = when (op) {
        is BulkOp.Insert -> WriteModel.InsertOne(op.document)
        is BulkOp.Replace -> WriteModel.ReplaceOne(EMPTY, op.replacement)
        is BulkOp.Delete -> WriteModel.DeleteOne(EMPTY)
    }

    override fun close() = runBlocking { cluster.closeSuspending() }

    private companion object {
        val EMPTY = BsonDocument()
    }
}
