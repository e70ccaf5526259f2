package dev.mooring.bench.official

import com.mongodb.MongoNamespace
import com.mongodb.client.model.DeleteOneModel
import com.mongodb.client.model.Filters
import com.mongodb.client.model.InsertOneModel
import com.mongodb.client.model.ReplaceOneModel
import com.mongodb.client.model.WriteModel
import com.mongodb.client.model.bulk.ClientBulkWriteResult
import com.mongodb.client.model.bulk.ClientNamespacedWriteModel
import com.mongodb.bulk.BulkWriteResult
import com.mongodb.kotlin.client.coroutine.MongoClient as CoroutineClient
import com.mongodb.reactivestreams.client.MongoClients as ReactiveClients
import dev.mooring.bench.workload.BulkOp
import dev.mooring.bench.workload.DocumentTaskOps
import dev.mooring.bench.workload.PreparedBulkWrite
import dev.mooring.bench.workload.WorkloadTask
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.flow.count
import kotlinx.coroutines.flow.firstOrNull
import org.bson.BsonDocument
import org.reactivestreams.Publisher
import org.reactivestreams.Subscriber
import java.util.concurrent.atomic.AtomicReference
import com.mongodb.client.MongoClients as SyncClients

/** A workload task through the official sync driver, on the calling (platform) thread. */
internal class SyncWorkload(task: WorkloadTask, target: String, operations: Int = task.operations) : DocumentTaskOps(task, null, operations) {
    private val client = SyncClients.create(OfficialClients.settings(target, null))
    private val db = client.getDatabase(task.database)
    private val collection = db.getCollection(task.collection, BsonDocument::class.java)

    override suspend fun dropDatabase() = db.drop()
    override suspend fun dropCollection() = collection.drop()
    override suspend fun createCollection(name: String) = db.createCollection(name)
    override suspend fun insertOne(document: BsonDocument) {
        collection.insertOne(document)
    }

    override suspend fun insertMany(documents: List<BsonDocument>) {
        collection.insertMany(documents)
    }

    override suspend fun findOneById(id: Int): Boolean = collection.find(Filters.eq("_id", id)).first() != null
    override suspend fun findAll(): Int {
        var n = 0
        collection.find().forEach { _ -> n++ }
        return n
    }

    override fun collectionBulkWrite(ops: List<BulkOp>): PreparedBulkWrite {
        val models = OfficialBulk.models(ops)
        return PreparedBulkWrite { OfficialBulk.acknowledged(collection.bulkWrite(models)) }
    }

    override fun clientBulkWrite(ops: List<BulkOp>): PreparedBulkWrite {
        val models = OfficialBulk.clientModels(task.database, ops)
        return PreparedBulkWrite { OfficialBulk.acknowledged(client.bulkWrite(models)) }
    }

    override fun close() = client.close()
}

/**
 * A workload task through the official reactive-streams driver, consumed by a plain
 * [Subscriber] that requests everything and counts (no Reactor, no coroutines), the calling
 * thread waiting on a latch.
 */
internal class ReactiveWorkload(task: WorkloadTask, target: String, operations: Int = task.operations) : DocumentTaskOps(task, null, operations) {
    private val client = ReactiveClients.create(OfficialClients.settings(target, null))
    private val db = client.getDatabase(task.database)
    private val collection = db.getCollection(task.collection, BsonDocument::class.java)

    override suspend fun dropDatabase() {
        drain(db.drop())
    }

    override suspend fun dropCollection() {
        drain(collection.drop())
    }

    override suspend fun createCollection(name: String) {
        drain(db.createCollection(name))
    }

    override suspend fun insertOne(document: BsonDocument) {
        drain(collection.insertOne(document))
    }

    override suspend fun insertMany(documents: List<BsonDocument>) {
        drain(collection.insertMany(documents))
    }

    override suspend fun findOneById(id: Int): Boolean = drain(collection.find(Filters.eq("_id", id)).first()) == 1
    override suspend fun findAll(): Int = drain(collection.find())

    override fun collectionBulkWrite(ops: List<BulkOp>): PreparedBulkWrite {
        val models = OfficialBulk.models(ops)
        return PreparedBulkWrite { OfficialBulk.acknowledged(single(collection.bulkWrite(models))) }
    }

    override fun clientBulkWrite(ops: List<BulkOp>): PreparedBulkWrite {
        val models = OfficialBulk.clientModels(task.database, ops)
        return PreparedBulkWrite { OfficialBulk.acknowledged(single(client.bulkWrite(models))) }
    }

    override fun close() = client.close()

    /** The one item [p] publishes, the calling thread waiting for it as [drain] does. */
    private fun <T : Any> single(p: Publisher<T>): T {
        val item = AtomicReference<T>()
        drain(p) { item.set(it) }
        return checkNotNull(item.get()) { "the reactive driver published nothing" }
    }

    /** Subscribes, requests everything, waits for the end and returns how many items came ([drainPublisher]). */
    private fun <T> drain(p: Publisher<T>, onItem: (T) -> Unit = {}): Int = drainPublisher(p, onItem)
}

/**
 * A workload task through the official Kotlin coroutine driver (`mongodb-driver-kotlin-coroutine`,
 * a wrapper of the reactive-streams driver), its callers on `Dispatchers.Default` as Mooring's.
 */
internal class CoroutineWorkload(task: WorkloadTask, target: String, operations: Int = task.operations) : DocumentTaskOps(task, Dispatchers.Default, operations) {
    private val client = CoroutineClient.create(OfficialClients.settings(target, null))
    private val db = client.getDatabase(task.database)
    private val collection = db.getCollection<BsonDocument>(task.collection)

    override suspend fun dropDatabase() = db.drop()
    override suspend fun dropCollection() = collection.drop()
    override suspend fun createCollection(name: String) = db.createCollection(name)
    override suspend fun insertOne(document: BsonDocument) {
        collection.insertOne(document)
    }

    override suspend fun insertMany(documents: List<BsonDocument>) {
        collection.insertMany(documents)
    }

    override suspend fun findOneById(id: Int): Boolean = collection.find(Filters.eq("_id", id)).firstOrNull() != null
    override suspend fun findAll(): Int = collection.find().count()

    override fun collectionBulkWrite(ops: List<BulkOp>): PreparedBulkWrite {
        val models = OfficialBulk.models(ops)
        return PreparedBulkWrite { OfficialBulk.acknowledged(collection.bulkWrite(models)) }
    }

    override fun clientBulkWrite(ops: List<BulkOp>): PreparedBulkWrite {
        val models = OfficialBulk.clientModels(task.database, ops)
        return PreparedBulkWrite { OfficialBulk.acknowledged(client.bulkWrite(models)) }
    }

    override fun close() = client.close()
}

/** The official drivers' write models for a bulk-write task's [BulkOp]s, shared by the sync, reactive and coroutine drivers. */
internal object OfficialBulk {
    private val EMPTY = BsonDocument()

    fun models(ops: List<BulkOp>): List<WriteModel<BsonDocument>> = ops.map { op ->
        when (op) {
            is BulkOp.Insert -> InsertOneModel(op.document)
            is BulkOp.Replace -> ReplaceOneModel(EMPTY, op.replacement)
            is BulkOp.Delete -> DeleteOneModel<BsonDocument>(EMPTY)
        }
    }

    fun clientModels(database: String, ops: List<BulkOp>): List<ClientNamespacedWriteModel> = ops.map { op ->
        val ns = MongoNamespace(database, op.collection)
        when (op) {
            is BulkOp.Insert -> ClientNamespacedWriteModel.insertOne(ns, op.document)
            is BulkOp.Replace -> ClientNamespacedWriteModel.replaceOne(ns, EMPTY, op.replacement)
            is BulkOp.Delete -> ClientNamespacedWriteModel.deleteOne(ns, EMPTY)
        }
    }

    fun acknowledged(r: BulkWriteResult): Long = r.insertedCount.toLong() + r.matchedCount + r.deletedCount

    fun acknowledged(r: ClientBulkWriteResult): Long = r.insertedCount + r.matchedCount + r.deletedCount
}
