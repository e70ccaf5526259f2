package dev.mooring.bench.official

import com.mongodb.client.model.Filters
import com.mongodb.kotlin.client.coroutine.MongoClient as CoroutineClient
import com.mongodb.reactivestreams.client.MongoClients as ReactiveClients
import dev.mooring.bench.workload.DocumentTaskOps
import dev.mooring.bench.workload.WorkloadTask
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.flow.count
import kotlinx.coroutines.flow.firstOrNull
import org.bson.BsonDocument
import org.reactivestreams.Publisher
import org.reactivestreams.Subscriber
import org.reactivestreams.Subscription
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.atomic.AtomicReference
import com.mongodb.client.MongoClients as SyncClients

/** A workload task through the official sync driver, on the calling (platform) thread. */
internal class SyncWorkload(task: WorkloadTask, target: String) : DocumentTaskOps(task, null) {
    private val client = SyncClients.create(OfficialClients.settings(target, null))
    private val db = client.getDatabase(task.database)
    private val collection = db.getCollection(task.collection, BsonDocument::class.java)

    override suspend fun dropDatabase() = db.drop()
    override suspend fun dropCollection() = collection.drop()
    override suspend fun createCollection() = db.createCollection(task.collection)
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

    override fun close() = client.close()
}

/**
 * A workload task through the official reactive-streams driver, consumed by a plain
 * [Subscriber] that requests everything and counts (no Reactor, no coroutines), the calling
 * thread waiting on a latch.
 */
internal class ReactiveWorkload(task: WorkloadTask, target: String) : DocumentTaskOps(task, null) {
    private val client = ReactiveClients.create(OfficialClients.settings(target, null))
    private val db = client.getDatabase(task.database)
    private val collection = db.getCollection(task.collection, BsonDocument::class.java)

    override suspend fun dropDatabase() {
        drain(db.drop())
    }

    override suspend fun dropCollection() {
        drain(collection.drop())
    }

    override suspend fun createCollection() {
        drain(db.createCollection(task.collection))
    }

    override suspend fun insertOne(document: BsonDocument) {
        drain(collection.insertOne(document))
    }

    override suspend fun insertMany(documents: List<BsonDocument>) {
        drain(collection.insertMany(documents))
    }

    override suspend fun findOneById(id: Int): Boolean = drain(collection.find(Filters.eq("_id", id)).first()) == 1
    override suspend fun findAll(): Int = drain(collection.find())

    override fun close() = client.close()

    /** Subscribes, requests everything, waits for the end and returns how many items came. */
    private fun <T> drain(p: Publisher<T>): Int {
        val done = CountDownLatch(1)
        val n = AtomicInteger()
        val error = AtomicReference<Throwable>()
        p.subscribe(object : Subscriber<T> {
            override fun onSubscribe(s: Subscription) = s.request(Long.MAX_VALUE)
            override fun onNext(t: T) {
                n.incrementAndGet()
            }

            override fun onError(t: Throwable) {
                error.set(t)
                done.countDown()
            }

            override fun onComplete() = done.countDown()
        })
        check(done.await(5, TimeUnit.MINUTES)) { "the reactive driver did not finish" }
        error.get()?.let { throw IllegalStateException("the reactive driver failed: $it", it) }
        return n.get()
    }
}

/**
 * A workload task through the official Kotlin coroutine driver (`mongodb-driver-kotlin-coroutine`,
 * a wrapper of the reactive-streams driver), its callers on `Dispatchers.Default` as Mooring's.
 */
internal class CoroutineWorkload(task: WorkloadTask, target: String) : DocumentTaskOps(task, Dispatchers.Default) {
    private val client = CoroutineClient.create(OfficialClients.settings(target, null))
    private val db = client.getDatabase(task.database)
    private val collection = db.getCollection<BsonDocument>(task.collection)

    override suspend fun dropDatabase() = db.drop()
    override suspend fun dropCollection() = collection.drop()
    override suspend fun createCollection() = db.createCollection(task.collection)
    override suspend fun insertOne(document: BsonDocument) {
        collection.insertOne(document)
    }

    override suspend fun insertMany(documents: List<BsonDocument>) {
        collection.insertMany(documents)
    }

    override suspend fun findOneById(id: Int): Boolean = collection.find(Filters.eq("_id", id)).firstOrNull() != null
    override suspend fun findAll(): Int = collection.find().count()

    override fun close() = client.close()
}
