package dev.mooring.bench.workload

import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonValue
import java.io.File

/**
 * The parallel tasks (benchmarking.md "Parallel": LDJSON multi-file import and export, GridFS multi-file upload and
 * download) for one library, over [files] (the first files of the task's directory: the cell may use fewer than the
 * spec's, and is scored on the same share of its size), phased as the spec says. Each library runs the files with
 * its own concurrency, at most [CONCURRENCY] files in flight; the abstract operations block until all are done.
 *
 * - LDJSON import: before each iteration the database (which holds only `corpus`) is dropped and `corpus` created;
 *   the timed phase reads every file from disk, parses its lines ([Ldjson.read]) and inserts them unordered; the
 *   library's acknowledged count must be every line of the files (counted in setup).
 * - LDJSON export: setup drops the database and inserts every file's documents unordered into [WorkloadTask.collection]
 *   with `_id` = the document's position in the dataset (file × documents per file + line), so that file i of the
 *   export is the `_id` range of [exportFilter]; before each iteration [outDir] is emptied; the timed phase finds each
 *   range and writes it as LDJSON into its own file, flushed to disk ([Ldjson.Writer]); every document must be written.
 * - GridFS upload: before each iteration the default bucket is dropped and a 1-byte file uploaded; the timed phase
 *   uploads every file from disk under its own name.
 * - GridFS download: setup drops the database and uploads every file; before each iteration [outDir] is emptied; the
 *   timed phase downloads each into a file of [outDir], flushed to disk; the bytes must be the files'.
 *
 * Not thread-safe: the harness calls the phases one at a time.
 */
abstract class ParallelTaskOps(
    protected val task: WorkloadTask,
    private val files: List<File>,
    /** Where the export and the download write (under `bench/target`), emptied before each of their iterations. */
    private val outDir: File,
) : TaskOps {
    protected abstract fun dropDatabase()
    protected abstract fun createCollection()
    protected abstract fun dropBucket()

    /** Untimed (the export's setup): [documents] inserted unordered into the task's collection. */
    protected abstract fun insertAll(documents: List<BsonDocument>)

    /** Each of [files] read, parsed ([Ldjson.read]) and inserted unordered, concurrently; returns the documents the server acknowledged. */
    protected abstract fun importFiles(files: List<File>): Long

    /** For each i, the documents of [exportFilter] (i, [perFile]) written into `outputs[i]` ([Ldjson.Writer]), concurrently; returns the documents written. */
    protected abstract fun exportFiles(outputs: List<File>, perFile: Int): Long

    /** Each of [files] uploaded from disk under its name, concurrently; returns the files' ids in the same order. */
    protected abstract fun uploadFiles(files: List<File>): List<BsonValue>

    /** Each file id downloaded into its file, written and flushed, concurrently; returns the bytes written. */
    protected abstract fun downloadFiles(files: List<Pair<BsonValue, File>>): Long

    private var perFile = 0
    private var lines = 0L
    private var ids: List<BsonValue> = emptyList()

    init {
        require(task.isParallel) { "${task.scenario.key} is not a parallel task" }
        require(files.isNotEmpty()) { "${task.scenario.key}: no files" }
    }

    override fun setup() {
        dropDatabase()
        when (task) {
            WorkloadTask.LDJSON_MULTI_FILE_EXPORT -> {
                createCollection()
                for ((i, f) in files.withIndex()) {
                    val docs = Ldjson.read(f)
                    if (i == 0) perFile = docs.size
                    check(docs.size == perFile) { "${f.name} has ${docs.size} documents, the first file $perFile" }
                    docs.forEachIndexed { line, d -> d["_id"] = BsonInt32(i * perFile + line) }
                    insertAll(docs)
                }
            }
            WorkloadTask.GRIDFS_MULTI_FILE_DOWNLOAD -> ids = uploadFiles(files)
            WorkloadTask.LDJSON_MULTI_FILE_IMPORT -> lines = files.sumOf { f -> f.useLines { ls -> ls.count { it.isNotBlank() }.toLong() } }
            else -> Unit
        }
    }

    override fun beforeTask() {
        when (task) {
            WorkloadTask.LDJSON_MULTI_FILE_IMPORT -> {
                dropDatabase()
                createCollection()
            }
            WorkloadTask.GRIDFS_MULTI_FILE_UPLOAD -> {
                dropBucket()
                uploadFiles(listOf(oneByteFile()))
            }
            else -> emptyOutDir()
        }
    }

    override fun doTask() {
        when (task) {
            WorkloadTask.LDJSON_MULTI_FILE_IMPORT -> {
                val n = importFiles(files)
                check(n == lines) { "imported $n documents, expected $lines" }
            }
            WorkloadTask.LDJSON_MULTI_FILE_EXPORT -> {
                val n = exportFiles(List(files.size) { File(outDir, "ldjson%03d.txt".format(it)) }, perFile)
                check(n == files.size.toLong() * perFile) { "exported $n documents, expected ${files.size.toLong() * perFile}" }
            }
            WorkloadTask.GRIDFS_MULTI_FILE_UPLOAD -> {
                val n = uploadFiles(files).size
                check(n == files.size) { "uploaded $n files, expected ${files.size}" }
            }
            else -> {
                val n = downloadFiles(ids.zip(files) { id, f -> id to File(outDir, f.name) })
                val expected = files.sumOf { it.length() }
                check(n == expected) { "downloaded $n bytes, expected $expected" }
            }
        }
    }

    private fun emptyOutDir() {
        outDir.deleteRecursively()
        check(outDir.mkdirs()) { "cannot create $outDir" }
    }

    /** The 1-byte file the upload task's bucket starts each iteration with (benchmarking.md: to initialize indexes). */
    private fun oneByteFile(): File = File(outDir.parentFile, "one-byte").also {
        it.parentFile.mkdirs()
        if (it.length() != 1L) it.writeBytes(byteArrayOf(1))
    }

    companion object {
        /** Files in flight at once, for every library: its coroutines, threads or reactive chains. */
        const val CONCURRENCY = 10

        /** GridFS reads and writes move this many bytes at a time: the default chunk size (255 KiB). */
        const val IO_BYTES = 255 * 1024

        /** The export's file [i]: `{_id: {$gte: i × perFile, $lt: (i + 1) × perFile}}`. */
        fun exportFilter(i: Int, perFile: Int): BsonDocument =
            BsonDocument("_id", BsonDocument("\$gte", BsonInt32(i * perFile)).append("\$lt", BsonInt32((i + 1) * perFile)))

        /** The first [count] files of [task]'s directory (unpacked on first use). */
        fun files(task: WorkloadTask, count: Int): List<File> = Datasets.parallelFiles(task).take(count)

        /** The directory a cell of [task] writes into for [library]: `bench/target/parallel-out/<library>/<task>`. */
        fun outDir(task: WorkloadTask, library: String): File = File(Datasets.scratchDir(), "parallel-out/$library/${task.scenario.key}")
    }
}
