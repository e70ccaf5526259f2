package dev.mooring.bench.workload

import org.bson.BsonDocument
import java.io.File
import java.util.concurrent.ConcurrentHashMap

/**
 * The benchmark datasets (`../shared/bench-data`, benchmarking.md's and odm-benchmarking.md's tarballs), unpacked at run
 * time into `bench/target/bench-data` (never into the sources) and loaded as `BsonDocument`s.
 * The archive directory is the `bench.data` system property, else the first `shared/bench-data`
 * found walking up from the working directory. Thread-safe; each file is parsed once per JVM.
 */
object Datasets {
    private const val ARCHIVE = "single_and_multi_document.tgz"
    private const val PARALLEL_ARCHIVE = "parallel.tgz"
    private val parsed = ConcurrentHashMap<String, BsonDocument>()
    private val files = ConcurrentHashMap<String, ByteArray>()
    private val texts = ConcurrentHashMap<String, String>()

    /** The directory holding the archives. */
    fun archiveDir(): File {
        System.getProperty("bench.data")?.let { return File(it) }
        var dir: File? = File("").absoluteFile
        while (dir != null) {
            for (candidate in listOf(File(dir, "shared/bench-data"), File(dir, "../shared/bench-data"))) {
                if (File(candidate, ARCHIVE).isFile) return candidate.canonicalFile
            }
            dir = dir.parentFile
        }
        throw IllegalStateException("no $ARCHIVE found: set -Dbench.data=<dir of the benchmark datasets> (../shared/bench-data)")
    }

    /** Scratch space beside the unpacked data (`bench/target`): where the parallel tasks write their output files. */
    fun scratchDir(): File = unpackDir().parentFile

    /** Where the archive is unpacked (`bench.unpacked`, else `bench/target/bench-data` of the working tree). */
    private fun unpackDir(): File = File(System.getProperty("bench.unpacked") ?: "bench/target/bench-data").absoluteFile

    /**
     * The unpacked file [name] (unpacked on first use, with `tar`): a name of the single- and multi-document
     * archive, or `flat-models/…` / `nested-models/…` of the ODM archives (odm-benchmarking.md's
     * `flat_models.tgz` and `nested_models.tgz`, which hold those directories).
     */
    @Synchronized
    fun file(name: String): File {
        val (archive, f) = when {
            name.startsWith("flat-models/") -> "flat_models.tgz" to File(unpackDir(), name)
            name.startsWith("nested-models/") -> "nested_models.tgz" to File(unpackDir(), name)
            else -> ARCHIVE to File(File(unpackDir(), "single_and_multi_document"), name)
        }
        if (f.isFile) return f
        unpackDir().mkdirs()
        val p = ProcessBuilder("tar", "-xzf", File(archiveDir(), archive).path, "-C", unpackDir().path).redirectErrorStream(true).start()
        val out = p.inputStream.readBytes().decodeToString()
        check(p.waitFor() == 0) { "unpacking $archive failed: $out" }
        check(f.isFile) { "$archive has no $name" }
        return f
    }

    /**
     * The files of a parallel task's directory ([WorkloadTask.file], `parallel/ldjson_multi` or `parallel/gridfs_multi`
     * of `parallel.tgz`), sorted by name. The whole archive (827 MB) is unpacked on first use, once: a marker file
     * written after `tar` succeeds says it is complete.
     */
    @Synchronized
    fun parallelFiles(task: WorkloadTask): List<File> {
        require(task.isParallel) { "${task.scenario.key} is not a parallel task" }
        val marker = File(unpackDir(), "parallel/.unpacked")
        if (!marker.isFile) {
            unpackDir().mkdirs()
            val p = ProcessBuilder("tar", "-xzf", File(archiveDir(), PARALLEL_ARCHIVE).path, "-C", unpackDir().path).redirectErrorStream(true).start()
            val out = p.inputStream.readBytes().decodeToString()
            check(p.waitFor() == 0) { "unpacking $PARALLEL_ARCHIVE failed: $out" }
            marker.writeText("")
        }
        val files = File(unpackDir(), task.file).listFiles { f -> f.isFile }?.sortedBy { it.name }.orEmpty()
        check(files.size == task.operations) { "$PARALLEL_ARCHIVE: ${task.file} has ${files.size} files, expected ${task.operations}" }
        return files
    }

    /** [task]'s file as text (an ODM task's JSON model), read once per JVM. */
    fun text(task: WorkloadTask): String = texts.computeIfAbsent(task.file) { file(it).readText() }

    /** [task]'s file as bytes (GRIDFS_LARGE), read once per JVM; callers must not change the array. */
    fun bytes(task: WorkloadTask): ByteArray = files.computeIfAbsent(task.file) { file(it).readBytes() }

    /** [task]'s document (a copy the caller may change). */
    fun document(task: WorkloadTask): BsonDocument = parsed.computeIfAbsent(task.file) { BsonDocument.parse(file(it).readText()) }.clone()
}
