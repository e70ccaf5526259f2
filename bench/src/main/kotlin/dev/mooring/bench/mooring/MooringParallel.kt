package dev.mooring.bench.mooring

import dev.mooring.bench.workload.Concurrently
import dev.mooring.bench.workload.Ldjson
import dev.mooring.bench.workload.ParallelTaskOps
import dev.mooring.bench.workload.WorkloadTask
import dev.mooring.driver.InsertManyOptions
import dev.mooring.driver.MongoCollection
import dev.mooring.driver.database
import dev.mooring.driver.gridfs.GridFSBucket
import dev.mooring.driver.gridfs.gridFSBucket
import dev.mooring.sdam.MongoCluster
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import org.bson.BsonDocument
import org.bson.BsonValue
import java.io.File
import java.io.FileInputStream
import java.io.FileOutputStream

/**
 * A parallel task through Mooring's Kotlin API as a Kotlin service would write it: one coroutine per file on
 * `Dispatchers.Default` ([Concurrently.coroutines], ten at a time), the disk reads and writes in
 * `withContext(Dispatchers.IO)`, JSON parsed on `Dispatchers.Default`; `insertMany` unordered, a find per export
 * file collected into its writer, `GridFSBucket.upload` from a `FileInputStream` (the bucket reads it on
 * `Dispatchers.IO`), the download's chunk flow written to a `FileOutputStream` and forced.
 */
internal class MooringParallel(task: WorkloadTask, target: String, files: List<File>, outDir: File) : ParallelTaskOps(task, files, outDir) {
    private val cluster = MongoCluster(target)
    private val db = cluster.database(task.database)
    private val collection: MongoCollection<BsonDocument> = db.collection(task.collection)
    private val bucket: GridFSBucket = db.gridFSBucket()

    private fun <T> blocking(block: suspend CoroutineScope.() -> T): T = runBlocking(Dispatchers.Default, block)

    override fun dropDatabase() = blocking { db.drop() }
    override fun createCollection() = blocking { db.createCollection(task.collection) }
    override fun dropBucket() = blocking { bucket.drop() }
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

    override fun uploadFiles(files: List<File>): List<BsonValue> = blocking {
        Concurrently.coroutines(files.size) { i -> FileInputStream(files[i]).use { bucket.upload(files[i].name, it) } }
    }

    override fun downloadFiles(files: List<Pair<BsonValue, File>>): Long = blocking {
        Concurrently.coroutines(files.size) { i ->
            val (id, file) = files[i]
            withContext(Dispatchers.IO) {
                FileOutputStream(file).use { out ->
                    var n = 0L
                    bucket.download(id).collect {
                        out.write(it)
                        n += it.size
                    }
                    out.channel.force(true)
                    n
                }
            }
        }.sum()
    }

    override fun close() = runBlocking { cluster.closeSuspending() }

    private companion object {
        val UNORDERED = InsertManyOptions(ordered = false)
    }
}
