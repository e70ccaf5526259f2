package dev.mooring.bench.workload

import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.runBlocking
import org.bson.BsonValue
import kotlin.coroutines.EmptyCoroutineContext

/**
 * The GridFS tasks (benchmarking.md "GridFS upload", "GridFS download") for one library, over its
 * default bucket of `perftest` ([dropDatabase], [dropBucket], [upload], [download]), phased as the
 * spec says:
 *
 * - upload: setup drops the database and loads GRIDFS_LARGE; before each iteration the bucket is
 *   dropped and a 1-byte file uploaded (so its collections and indexes exist); the timed phase
 *   uploads GRIDFS_LARGE from memory;
 * - download: setup drops the database and uploads GRIDFS_LARGE as `gridfstest`, keeping its
 *   `_id`; the timed phase downloads it by that `_id` into memory, and the byte count must be the
 *   file's.
 *
 * As [DocumentTaskOps], [dispatcher] (null: the calling thread) runs each phase in one `runBlocking`.
 */
abstract class GridFsTaskOps(
    protected val task: WorkloadTask,
    private val dispatcher: CoroutineDispatcher?,
    /** The file's bytes: GRIDFS_LARGE (tests pass a smaller file). */
    private val data: ByteArray = Datasets.bytes(task),
) : TaskOps {
    protected abstract suspend fun dropDatabase()
    protected abstract suspend fun dropBucket()

    /** Uploads [data] as [filename] into the default bucket; returns the file's `_id`. */
    protected abstract suspend fun upload(filename: String, data: ByteArray): BsonValue

    /** Downloads the file [id] into memory and returns how many bytes came. */
    protected abstract suspend fun download(id: BsonValue): Long

    private var fileId: BsonValue? = null

    init {
        require(task.isGridFs) { "${task.scenario.key} is not a GridFS task" }
    }

    private fun <T> blocking(block: suspend () -> T): T = runBlocking(dispatcher ?: EmptyCoroutineContext) { block() }

    override fun setup() = blocking {
        dropDatabase()
        if (task == WorkloadTask.GRIDFS_DOWNLOAD) fileId = upload("gridfstest", data)
    }

    override fun beforeTask() {
        if (task == WorkloadTask.GRIDFS_UPLOAD) blocking {
            dropBucket()
            upload("one-byte", ONE_BYTE)
        }
    }

    override fun doTask() = blocking {
        when (task) {
            WorkloadTask.GRIDFS_UPLOAD -> {
                upload("gridfstest", data)
                Unit
            }
            else -> {
                val n = download(checkNotNull(fileId) { "no file uploaded in setup" })
                check(n == data.size.toLong()) { "downloaded $n bytes, expected ${data.size}" }
            }
        }
    }

    private companion object {
        val ONE_BYTE = byteArrayOf(1)
    }
}
