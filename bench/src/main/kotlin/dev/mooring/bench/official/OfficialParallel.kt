package dev.mooring.bench.official

import com.mongodb.client.gridfs.GridFSBuckets as SyncBuckets
import com.mongodb.client.model.InsertManyOptions
import com.mongodb.kotlin.client.coroutine.MongoClient as CoroutineClient
import com.mongodb.reactivestreams.client.gridfs.GridFSBuckets as ReactiveBuckets
import com.mongodb.reactivestreams.client.MongoClients as ReactiveClients
import dev.mooring.bench.workload.Concurrently
import dev.mooring.bench.workload.Ldjson
import dev.mooring.bench.workload.ParallelTaskOps
import dev.mooring.bench.workload.WorkloadTask
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import org.bson.BsonDocument
import org.bson.BsonObjectId
import org.bson.BsonValue
import org.reactivestreams.Publisher
import org.reactivestreams.Subscriber
import org.reactivestreams.Subscription
import java.io.File
import java.io.FileInputStream
import java.io.FileOutputStream
import java.nio.ByteBuffer
import java.nio.channels.FileChannel
import java.nio.file.StandardOpenOption
import java.util.concurrent.ExecutorService
import java.util.concurrent.Executors
import java.util.concurrent.atomic.AtomicLong
import java.util.concurrent.atomic.AtomicReference
import com.mongodb.client.MongoClients as SyncClients

private val UNORDERED: InsertManyOptions = InsertManyOptions().ordered(false)

/**
 * A parallel task through the official sync driver: a fixed pool of ten platform threads ([Concurrently.threads]),
 * one task per file: `insertMany` unordered of the parsed file, a find per export file iterated into its writer,
 * `uploadFromStream` of a `FileInputStream`, `downloadToStream` into a `FileOutputStream`, forced.
 */
internal class SyncParallel(task: WorkloadTask, target: String, files: List<File>, outDir: File) : ParallelTaskOps(task, files, outDir) {
    private val client = SyncClients.create(OfficialClients.settings(target, null))
    private val db = client.getDatabase(task.database)
    private val collection = db.getCollection(task.collection, BsonDocument::class.java)
    private val bucket = SyncBuckets.create(db)
    private val pool: ExecutorService = Executors.newFixedThreadPool(CONCURRENCY)

    override fun dropDatabase() = db.drop()
    override fun createCollection() = db.createCollection(task.collection)
    override fun dropBucket() = bucket.drop()
    override fun insertAll(documents: List<BsonDocument>) {
        collection.insertMany(documents, UNORDERED)
    }

    override fun importFiles(files: List<File>): Long = Concurrently.threads(pool, files.size) { i ->
        collection.insertMany(Ldjson.read(files[i]), UNORDERED).insertedIds.size.toLong()
    }.sum()

    override fun exportFiles(outputs: List<File>, perFile: Int): Long = Concurrently.threads(pool, outputs.size) { i ->
        Ldjson.Writer(outputs[i]).use { w ->
            collection.find(exportFilter(i, perFile)).forEach { w.write(it) }
            w.count
        }
    }.sum()

    override fun uploadFiles(files: List<File>): List<BsonValue> = Concurrently.threads(pool, files.size) { i ->
        FileInputStream(files[i]).use { BsonObjectId(bucket.uploadFromStream(files[i].name, it)) }
    }

    override fun downloadFiles(files: List<Pair<BsonValue, File>>): Long = Concurrently.threads(pool, files.size) { i ->
        val (id, file) = files[i]
        FileOutputStream(file).use { out ->
            bucket.downloadToStream(id, out)
            out.channel.force(true)
            out.channel.size()
        }
    }.sum()

    override fun close() {
        pool.shutdownNow()
        client.close()
    }
}

/**
 * A parallel task through the official reactive-streams driver: ten asynchronous chains ([Concurrently.chains]), each
 * file's publisher consumed by a plain [Subscriber] whose end starts the next file on the driver's thread (no Reactor):
 * the file read and parsed by the thread that starts it, `insertMany` unordered; a find per export file written by
 * `onNext`; `uploadFromPublisher` of a publisher reading the file 255 KiB per request ([FilePublisher]);
 * `downloadToPublisher` written into a `FileChannel`, forced on completion.
 */
internal class ReactiveParallel(task: WorkloadTask, target: String, files: List<File>, outDir: File) : ParallelTaskOps(task, files, outDir) {
    private val client = ReactiveClients.create(OfficialClients.settings(target, null))
    private val db = client.getDatabase(task.database)
    private val collection = db.getCollection(task.collection, BsonDocument::class.java)
    private val bucket = ReactiveBuckets.create(db)

    override fun dropDatabase() {
        drainPublisher(db.drop())
    }

    override fun createCollection() {
        drainPublisher(db.createCollection(task.collection))
    }

    override fun dropBucket() {
        drainPublisher(bucket.drop())
    }

    override fun insertAll(documents: List<BsonDocument>) {
        drainPublisher(collection.insertMany(documents, UNORDERED))
    }

    override fun importFiles(files: List<File>): Long {
        val n = AtomicLong()
        Concurrently.chains(files.size) { i, end ->
            subscribe(collection.insertMany(Ldjson.read(files[i]), UNORDERED), { n.addAndGet(it.insertedIds.size.toLong()) }, {}, end)
        }
        return n.get()
    }

    override fun exportFiles(outputs: List<File>, perFile: Int): Long {
        val n = AtomicLong()
        Concurrently.chains(outputs.size) { i, end ->
            val w = Ldjson.Writer(outputs[i])
            subscribe(collection.find(exportFilter(i, perFile)), { w.write(it) }, {
                w.close()
                n.addAndGet(w.count)
            }, end)
        }
        return n.get()
    }

    override fun uploadFiles(files: List<File>): List<BsonValue> {
        val ids = arrayOfNulls<BsonValue>(files.size)
        Concurrently.chains(files.size) { i, end ->
            subscribe(bucket.uploadFromPublisher(files[i].name, FilePublisher(files[i])), { ids[i] = BsonObjectId(it) }, {}, end)
        }
        return ids.map { checkNotNull(it) { "the reactive driver returned no file id" } }
    }

    override fun downloadFiles(files: List<Pair<BsonValue, File>>): Long {
        val n = AtomicLong()
        Concurrently.chains(files.size) { i, end ->
            val (id, file) = files[i]
            val channel = FileChannel.open(file.toPath(), StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)
            subscribe(bucket.downloadToPublisher(id), { buf ->
                n.addAndGet(buf.remaining().toLong())
                while (buf.hasRemaining()) channel.write(buf)
            }, {
                channel.force(true)
                channel.close()
            }, end)
        }
        return n.get()
    }

    override fun close() = client.close()

    /** Subscribes to [p] requesting everything: [onItem] for each item, then [onComplete] and [end] (or [end] with the error). */
    private fun <T> subscribe(p: Publisher<T>, onItem: (T) -> Unit, onComplete: () -> Unit, end: (Throwable?) -> Unit) {
        p.subscribe(object : Subscriber<T> {
            override fun onSubscribe(s: Subscription) = s.request(Long.MAX_VALUE)
            override fun onNext(t: T) = onItem(t)
            override fun onError(t: Throwable) = end(t)
            override fun onComplete() {
                val failure = runCatching(onComplete).exceptionOrNull()
                end(failure)
            }
        })
    }

    /**
     * A publisher of [file]'s bytes, [ParallelTaskOps.IO_BYTES] per buffer, read from disk on the requesting thread as demand comes
     * (reentrant requests add demand to the loop already emitting). One subscriber.
     */
    private class FilePublisher(private val file: File) : Publisher<ByteBuffer> {
        override fun subscribe(s: Subscriber<in ByteBuffer>) {
            val channel = FileChannel.open(file.toPath(), StandardOpenOption.READ)
            val demand = AtomicLong()
            val emitting = AtomicReference<Thread?>()
            var done = false
            fun finish(t: Throwable?) {
                if (done) return
                done = true
                channel.close()
                if (t == null) s.onComplete() else s.onError(t)
            }
            s.onSubscribe(object : Subscription {
                override fun request(n: Long) {
                    if (n <= 0) return finish(IllegalArgumentException("request($n): reactive-streams rule 3.9"))
                    if (demand.getAndAdd(n) < 0) demand.set(Long.MAX_VALUE) // overflow: unbounded
                    if (!emitting.compareAndSet(null, Thread.currentThread())) return
                    try {
                        while (!done && demand.get() > 0) {
                            val buf = ByteBuffer.allocate(ParallelTaskOps.IO_BYTES)
                            while (buf.hasRemaining() && channel.read(buf) >= 0) Unit
                            buf.flip()
                            if (buf.hasRemaining()) {
                                demand.decrementAndGet()
                                s.onNext(buf)
                            }
                            if (buf.limit() < ParallelTaskOps.IO_BYTES) finish(null)
                        }
                    } catch (t: Throwable) {
                        finish(t)
                    } finally {
                        emitting.set(null)
                    }
                }

                override fun cancel() {
                    done = true
                    runCatching { channel.close() }
                }
            })
        }
    }
}

/**
 * A parallel task through the official Kotlin coroutine driver (LDJSON only: it has no GridFS API), written as
 * [dev.mooring.bench.mooring.MooringParallel] is: one coroutine per file on `Dispatchers.Default`
 * ([Concurrently.coroutines]), disk reads and writes in `withContext(Dispatchers.IO)`.
 */
internal class CoroutineParallel(task: WorkloadTask, target: String, files: List<File>, outDir: File) : ParallelTaskOps(task, files, outDir) {
    private val client = CoroutineClient.create(OfficialClients.settings(target, null))
    private val db = client.getDatabase(task.database)
    private val collection = db.getCollection<BsonDocument>(task.collection)

    init {
        require(task.isLdjson) { "the Kotlin coroutine driver has no GridFS API" }
    }

    private fun <T> blocking(block: suspend CoroutineScope.() -> T): T = runBlocking(Dispatchers.Default, block)

    override fun dropDatabase() = blocking { db.drop() }
    override fun createCollection() = blocking { db.createCollection(task.collection) }
    override fun dropBucket() = throw UnsupportedOperationException("no GridFS API")
    override fun insertAll(documents: List<BsonDocument>) = blocking {
        collection.insertMany(documents, UNORDERED)
        Unit
    }

    override fun importFiles(files: List<File>): Long = blocking {
        Concurrently.coroutines(files.size) { i ->
            val docs = Ldjson.parse(withContext(Dispatchers.IO) { files[i].readLines() })
            collection.insertMany(docs, UNORDERED).insertedIds.size.toLong()
        }.sum()
    }

    override fun exportFiles(outputs: List<File>, perFile: Int): Long = blocking {
        Concurrently.coroutines(outputs.size) { i ->
            withContext(Dispatchers.IO) {
                Ldjson.Writer(outputs[i]).use { w ->
                    collection.find(exportFilter(i, perFile)).collect { w.write(it) }
                    w.count
                }
            }
        }.sum()
    }

    override fun uploadFiles(files: List<File>): List<BsonValue> = throw UnsupportedOperationException("no GridFS API")
    override fun downloadFiles(files: List<Pair<BsonValue, File>>): Long = throw UnsupportedOperationException("no GridFS API")

    override fun close() = client.close()
}
