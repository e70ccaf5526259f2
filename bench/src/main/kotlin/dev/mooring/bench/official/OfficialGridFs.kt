package dev.mooring.bench.official

import com.mongodb.client.gridfs.GridFSBuckets as SyncBuckets
import com.mongodb.reactivestreams.client.gridfs.GridFSBuckets as ReactiveBuckets
import com.mongodb.client.MongoClients as SyncClients
import com.mongodb.reactivestreams.client.MongoClients as ReactiveClients
import dev.mooring.bench.workload.Datasets
import dev.mooring.bench.workload.GridFsTaskOps
import dev.mooring.bench.workload.WorkloadTask
import org.bson.BsonObjectId
import org.bson.BsonValue
import org.reactivestreams.Publisher
import org.reactivestreams.Subscriber
import org.reactivestreams.Subscription
import java.io.ByteArrayInputStream
import java.nio.ByteBuffer
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicLong
import java.util.concurrent.atomic.AtomicReference

/**
 * A GridFS task through the official sync driver's `GridFSBucket` on the calling thread:
 * `uploadFromStream` of the in-memory file; `openDownloadStream` read to its end counting bytes,
 * its cursor's batch size set to what a server's 16 MiB batch holds ([CHUNKS_PER_BATCH]).
 */
internal class SyncGridFs(task: WorkloadTask, target: String, data: ByteArray = Datasets.bytes(task)) : GridFsTaskOps(task, null, data) {
    private val client = SyncClients.create(OfficialClients.settings(target, null))
    private val db = client.getDatabase(task.database)
    private val bucket = SyncBuckets.create(db)

    override suspend fun dropDatabase() = db.drop()
    override suspend fun dropBucket() = bucket.drop()
    override suspend fun upload(filename: String, data: ByteArray): BsonValue = BsonObjectId(bucket.uploadFromStream(filename, ByteArrayInputStream(data)))
    override suspend fun download(id: BsonValue): Long {
        var n = 0L
        bucket.openDownloadStream(id).batchSize(CHUNKS_PER_BATCH).use { s ->
            val buf = ByteArray(READ_BYTES)
            while (true) {
                val r = s.read(buf)
                if (r < 0) break
                n += r
            }
        }
        return n
    }

    override fun close() = client.close()

    private companion object {
        /**
         * Chunks per batch of the download's cursor: as many default chunks (261,120 bytes) as fit in a server's
         * 16 MiB batch. mongo-java-server does not cap a batch at 16 MiB: without a batch size it sends all 201 chunks
         * (52 MB) in one reply, beyond the 48 MB `maxMessageSizeBytes` the driver enforces on replies.
         */
        const val CHUNKS_PER_BATCH = 64
        const val READ_BYTES = 255 * 1024
    }
}

/**
 * A GridFS task through the official reactive-streams driver's `GridFSBucket`: `uploadFromPublisher`
 * of a one-buffer publisher over the in-memory file, `downloadToPublisher` consumed by a plain
 * [Subscriber] that counts bytes, the calling thread waiting on a latch (as [ReactiveWorkload]).
 */
internal class ReactiveGridFs(task: WorkloadTask, target: String, data: ByteArray = Datasets.bytes(task)) : GridFsTaskOps(task, null, data) {
    private val client = ReactiveClients.create(OfficialClients.settings(target, null))
    private val db = client.getDatabase(task.database)
    private val bucket = ReactiveBuckets.create(db)

    override suspend fun dropDatabase() {
        await(db.drop()) {}
    }

    override suspend fun dropBucket() {
        await(bucket.drop()) {}
    }

    override suspend fun upload(filename: String, data: ByteArray): BsonValue {
        val id = AtomicReference<BsonValue>()
        await(bucket.uploadFromPublisher(filename, OneBuffer(data))) { id.set(BsonObjectId(it)) }
        return checkNotNull(id.get()) { "the reactive driver returned no file id" }
    }

    override suspend fun download(id: BsonValue): Long {
        val n = AtomicLong()
        await(bucket.downloadToPublisher(id)) { n.addAndGet(it.remaining().toLong()) }
        return n.get()
    }

    override fun close() = client.close()

    /** Subscribes, requests everything, hands each item to [onItem] and waits for the end. */
    private fun <T> await(p: Publisher<T>, onItem: (T) -> Unit) {
        drainPublisher(p, onItem)
    }

    /** A publisher of one `ByteBuffer` over [data] (each subscriber gets its own view), then completion. */
    private class OneBuffer(private val data: ByteArray) : Publisher<ByteBuffer> {
        override fun subscribe(s: Subscriber<in ByteBuffer>) {
            val sent = AtomicBoolean()
            val cancelled = AtomicBoolean()
            s.onSubscribe(object : Subscription {
                override fun request(n: Long) {
                    if (n <= 0) {
                        if (!cancelled.getAndSet(true)) s.onError(IllegalArgumentException("request($n): reactive-streams rule 3.9"))
                        return
                    }
                    if (cancelled.get() || sent.getAndSet(true)) return
                    s.onNext(ByteBuffer.wrap(data))
                    if (!cancelled.get()) s.onComplete()
                }

                override fun cancel() = cancelled.set(true)
            })
        }
    }
}
