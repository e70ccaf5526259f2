package dev.mooring.bench.mooring

import dev.mooring.bench.workload.BulkOp
import dev.mooring.bench.workload.Datasets
import dev.mooring.bench.workload.DocumentTaskOps
import dev.mooring.bench.workload.GridFsTaskOps
import dev.mooring.bench.workload.PreparedBulkWrite
import dev.mooring.bench.workload.WorkloadTask
import dev.mooring.driver.BulkWriteResult
import dev.mooring.driver.ClientBulkWriteResult
import dev.mooring.driver.ClientNamespacedWriteModel
import dev.mooring.driver.WriteModel
import dev.mooring.java.JavaMongoCluster
import dev.mooring.java.MongoClusters
import dev.mooring.java.WriteModels
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString
import org.bson.BsonValue
import java.io.ByteArrayInputStream
import java.util.concurrent.CountDownLatch
import java.util.concurrent.Flow
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicReference

/**
 * A workload task through Mooring's Java facade (`mooring-java`) as a Java service calls it: on
 * the calling platform thread, each operation's `CompletableFuture` waited for with `join()`, a
 * find's `Flow.Publisher` drained by a plain subscriber requesting everything (the thread waiting
 * on a latch), `BsonDocument` collection, the models from [WriteModels]. The facade has no
 * `createCollection`: a Java user runs the `create` command. It does not add an `_id` to the
 * caller's document (the driver below it sends one with the `_id` it generates).
 */
internal class MooringJavaWorkload(task: WorkloadTask, target: String, operations: Int = task.operations) : DocumentTaskOps(task, null, operations) {
    private val cluster: JavaMongoCluster = MongoClusters.create(target)
    private val db = cluster.getDatabase(task.database)
    private val collection = db.getCollection(task.collection)

    override val insertAddsId: Boolean get() = false

    override suspend fun dropDatabase() {
        db.drop().join()
    }

    override suspend fun dropCollection() {
        collection.drop().join()
    }

    override suspend fun createCollection(name: String) {
        db.runCommand(BsonDocument("create", BsonString(name))).join()
    }

    override suspend fun insertOne(document: BsonDocument) {
        collection.insertOne(document).join()
    }

    override suspend fun insertMany(documents: List<BsonDocument>) {
        collection.insertMany(documents).join()
    }

    override suspend fun findOneById(id: Int): Boolean = JavaFlows.drain(collection.find(BsonDocument("_id", BsonInt32(id)))) {} == 1L
    override suspend fun findAll(): Int = JavaFlows.drain(collection.find()) {}.toInt()

    override fun collectionBulkWrite(ops: List<BulkOp>): PreparedBulkWrite {
        val models = ops.map(::model)
        return PreparedBulkWrite {
            when (val r = collection.bulkWrite(models).join()) {
                is BulkWriteResult.Acknowledged -> r.insertedCount + r.matchedCount + r.deletedCount
                is BulkWriteResult.Unacknowledged -> error("an acknowledged write concern was expected")
            }
        }
    }

    override fun clientBulkWrite(ops: List<BulkOp>): PreparedBulkWrite {
        val models = ops.map { ClientNamespacedWriteModel.of("${task.database}.${it.collection}", model(it)) }
        return PreparedBulkWrite {
            when (val r = cluster.bulkWrite(models).join()) {
                is ClientBulkWriteResult.Acknowledged -> r.insertedCount + r.matchedCount + r.deletedCount
                ClientBulkWriteResult.Unacknowledged -> error("an acknowledged write concern was expected")
            }
        }
    }

    private fun model(op: BulkOp): WriteModel<BsonDocument> = when (op) {
        is BulkOp.Insert -> WriteModels.insertOne(op.document)
        is BulkOp.Replace -> WriteModels.replaceOne(EMPTY, op.replacement)
        is BulkOp.Delete -> WriteModels.deleteOne(EMPTY)
    }

    override fun close() = cluster.close()

    private companion object {
        val EMPTY = BsonDocument()
    }
}

/**
 * A GridFS task through the Java facade's bucket (`JavaMongoDatabase.getGridFSBucket`), on the
 * calling thread: the upload from an `InputStream` over the in-memory file (`join()`), the
 * download's `Flow.Publisher<ByteBuffer>` drained counting bytes.
 */
internal class MooringJavaGridFs(task: WorkloadTask, target: String, data: ByteArray = Datasets.bytes(task)) : GridFsTaskOps(task, null, data) {
    private val cluster: JavaMongoCluster = MongoClusters.create(target)
    private val db = cluster.getDatabase(task.database)
    private val bucket = db.getGridFSBucket()

    override suspend fun dropDatabase() {
        db.drop().join()
    }

    override suspend fun dropBucket() {
        bucket.drop().join()
    }

    override suspend fun upload(filename: String, data: ByteArray): BsonValue = bucket.upload(filename, ByteArrayInputStream(data)).join()

    override suspend fun download(id: BsonValue): Long {
        var n = 0L
        JavaFlows.drain(bucket.download(id)) { n += it.remaining() }
        return n
    }

    override fun close() = cluster.close()
}

/** Draining a `java.util.concurrent.Flow.Publisher` on the calling thread, as a Java user without a reactive library would. */
internal object JavaFlows {
    /** Subscribes, requests everything, hands each item to [onItem] (on the publisher's thread), waits for the end; returns how many items came. */
    fun <T> drain(p: Flow.Publisher<T>, onItem: (T) -> Unit): Long {
        val done = CountDownLatch(1)
        val error = AtomicReference<Throwable>()
        var n = 0L
        p.subscribe(object : Flow.Subscriber<T> {
            override fun onSubscribe(s: Flow.Subscription) = s.request(Long.MAX_VALUE)
            override fun onNext(item: T) {
                n++
                onItem(item)
            }

            override fun onError(t: Throwable) {
                error.set(t)
                done.countDown()
            }

            override fun onComplete() = done.countDown()
        })
        check(done.await(5, TimeUnit.MINUTES)) { "the Java facade's publisher did not finish" }
        error.get()?.let { throw IllegalStateException("the Java facade failed: $it", it) }
        return n
    }
}
