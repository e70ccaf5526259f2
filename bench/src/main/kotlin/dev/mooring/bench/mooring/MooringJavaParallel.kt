package dev.mooring.bench.mooring

import dev.mooring.bench.workload.Concurrently
import dev.mooring.bench.workload.Ldjson
import dev.mooring.bench.workload.ParallelTaskOps
import dev.mooring.bench.workload.WorkloadTask
import dev.mooring.driver.FindOptions
import dev.mooring.driver.InsertManyOptions
import dev.mooring.java.JavaMongoCluster
import dev.mooring.java.MongoClusters
import org.bson.BsonDocument
import org.bson.BsonString
import org.bson.BsonValue
import java.io.File
import java.io.FileInputStream
import java.io.FileOutputStream
import java.util.concurrent.ExecutorService
import java.util.concurrent.Executors

/**
 * A parallel task through Mooring's Java facade as a Java service would write it: a fixed pool of ten platform
 * threads ([Concurrently.threads]), one task per file, each reading and parsing its file and joining the facade's
 * futures (`insertMany` unordered, `upload` from a `FileInputStream`) or draining its publishers ([JavaFlows]: the
 * export's find into the file's writer, the download's buffers into a `FileChannel`, forced), the `create` command
 * through `runCommand` (the facade has no `createCollection`).
 */
internal class MooringJavaParallel(task: WorkloadTask, target: String, files: List<File>, outDir: File) : ParallelTaskOps(task, files, outDir) {
    private val cluster: JavaMongoCluster = MongoClusters.create(target)
    private val db = cluster.getDatabase(task.database)
    private val collection = db.getCollection(task.collection)
    private val bucket = db.getGridFSBucket()
    private val pool: ExecutorService = Executors.newFixedThreadPool(CONCURRENCY)

    override fun dropDatabase() {
        db.drop().join()
    }

    override fun createCollection() {
        db.runCommand(BsonDocument("create", BsonString(task.collection))).join()
    }

    override fun dropBucket() {
        bucket.drop().join()
    }

    override fun insertAll(documents: List<BsonDocument>) {
        collection.insertMany(documents, UNORDERED, null).join()
    }

    override fun importFiles(files: List<File>): Long = Concurrently.threads(pool, files.size) { i ->
        collection.insertMany(Ldjson.read(files[i]), UNORDERED, null).join().insertedIds.size.toLong()
    }.sum()

    override fun exportFiles(outputs: List<File>, perFile: Int): Long = Concurrently.threads(pool, outputs.size) { i ->
        Ldjson.Writer(outputs[i]).use { w ->
            JavaFlows.drain(collection.find(exportFilter(i, perFile), FindOptions())) { w.write(it) }
            w.count
        }
    }.sum()

    override fun uploadFiles(files: List<File>): List<BsonValue> = Concurrently.threads(pool, files.size) { i ->
        FileInputStream(files[i]).use { bucket.upload(files[i].name, it).join() }
    }

    override fun downloadFiles(files: List<Pair<BsonValue, File>>): Long = Concurrently.threads(pool, files.size) { i ->
        val (id, file) = files[i]
        FileOutputStream(file).use { out ->
            var n = 0L
            JavaFlows.drain(bucket.download(id)) { buf ->
                n += buf.remaining()
                while (buf.hasRemaining()) out.channel.write(buf)
            }
            out.channel.force(true)
            n
        }
    }.sum()

    override fun close() {
        pool.shutdownNow()
        cluster.close()
    }

    private companion object {
        val UNORDERED = InsertManyOptions(ordered = false)
    }
}
