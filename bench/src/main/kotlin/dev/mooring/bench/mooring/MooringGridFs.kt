package dev.mooring.bench.mooring

import dev.mooring.bench.workload.Datasets
import dev.mooring.bench.workload.GridFsTaskOps
import dev.mooring.bench.workload.WorkloadTask
import dev.mooring.driver.database
import dev.mooring.driver.gridfs.GridFSBucket
import dev.mooring.driver.gridfs.gridFSBucket
import dev.mooring.sdam.MongoCluster
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.flow.flowOf
import kotlinx.coroutines.runBlocking
import org.bson.BsonValue

/**
 * A GridFS task through Mooring's bucket (`dev.mooring.driver.gridfs`, the default bucket of
 * `perftest`), on `Dispatchers.Default` as [MooringWorkload]: the upload sends the in-memory file
 * as a one-array flow (the bucket cuts it into chunks); the download collects the chunk flow,
 * counting bytes.
 */
internal class MooringGridFs(task: WorkloadTask, target: String, data: ByteArray = Datasets.bytes(task)) : GridFsTaskOps(task, Dispatchers.Default, data) {
    private val cluster = MongoCluster(target)
    private val db = cluster.database(task.database)
    private val bucket: GridFSBucket = db.gridFSBucket()

    override suspend fun dropDatabase() = db.drop()
    override suspend fun dropBucket() = bucket.drop()
    override suspend fun upload(filename: String, data: ByteArray): BsonValue = bucket.upload(filename, flowOf(data))
    override suspend fun download(id: BsonValue): Long {
        var n = 0L
        bucket.download(id).collect { n += it.size }
        return n
    }

    override fun close() = runBlocking { cluster.closeSuspending() }
}
