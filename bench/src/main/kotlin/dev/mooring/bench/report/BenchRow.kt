package dev.mooring.bench.report

import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.doubleOrNull
import kotlinx.serialization.json.int
import kotlinx.serialization.json.jsonPrimitive

/**
 * The libraries compared. [key] is the report's `library` value. [official]: the official
 * MongoDB Java driver. [FLOOR] is no client at all but the raw socket loop Mooring is measured
 * against (`floor/FloorDriver.kt`); it runs the ping scenarios only. [MOORING]'s callers run on
 * the cluster's event loops (`MongoCluster.dispatcher`, as the README advises for throughput);
 * [MOORING_DEFAULT] is the same client with its callers on `Dispatchers.Default` (ping scenarios
 * only), so the table also shows what a caller that stays on its own dispatcher gets.
 * [MOORING_ONE_LOOP] is [MOORING] with `eventLoopThreads = 1` instead of one loop per core (ping
 * scenarios only): the setting a user whose callers run on the loops can choose. [MOORING_JAVA] is
 * the Java facade called from platform threads. The ratio lines compare [MOORING] (the defaults) only.
 */
enum class Library(val key: String, val official: Boolean) {
    MOORING("mooring", false),
    MOORING_DEFAULT("mooring-default", false),
    MOORING_ONE_LOOP("mooring-1loop", false),
    /** Mooring's Java facade (`JavaMongoCluster`) from platform threads, one per caller, each joining its future: ping scenarios and the workload tasks. */
    MOORING_JAVA("mooring-java", false),
    JAVA_SYNC("java-sync", true),
    JAVA_REACTIVE("java-reactive", true),
    /** The official Kotlin coroutine driver (`mongodb-driver-kotlin-coroutine`): the workload tasks only. */
    KOTLIN_COROUTINE("kotlin-coroutine", true),
    FLOOR("floor", false);

    /**
     * True when this library measures [scenario]: the floor and the two Mooring variants only the
     * ping scenarios (the floor also the decoding workload tasks, [Scenario.hasFloor]); the Java
     * facade the ping scenarios and the workload tasks; the coroutine driver only the workload
     * tasks, GridFS excepted (it has no GridFS API); the others everything but what they cannot run. The ODM
     * tasks ([Scenario.isOdm]: `@Serializable` models over kotlinx.serialization) only Mooring and the coroutine
     * driver with bson-kotlinx: the Java libraries have no kotlinx.serialization codec.
     */
    fun measures(scenario: Scenario): Boolean = when (this) {
        MOORING_DEFAULT, MOORING_ONE_LOOP -> scenario.isPing
        MOORING_JAVA -> scenario.isPing || (scenario.isWorkload && !scenario.isOdm)
        FLOOR -> scenario.isPing || scenario.hasFloor
        KOTLIN_COROUTINE -> scenario.isWorkload && scenario !in NO_GRIDFS_API
        MOORING -> true
        JAVA_SYNC, JAVA_REACTIVE -> !scenario.isOdm
    }

    companion object {
        /** The GridFS tasks: the official Kotlin coroutine driver has no GridFS API. */
        private val NO_GRIDFS_API = setOf(Scenario.GRIDFS_UPLOAD, Scenario.GRIDFS_DOWNLOAD, Scenario.GRIDFS_MULTI_FILE_UPLOAD, Scenario.GRIDFS_MULTI_FILE_DOWNLOAD)

        fun of(key: String): Library = entries.firstOrNull { it.key == key }
            ?: throw IllegalArgumentException("unknown library '$key' (expected one of ${entries.joinToString { it.key }})")
    }
}

/**
 * The scenarios. [key] is the report's `scenario` value. [isWorkload]: a task of the drivers'
 * benchmark suite (benchmarking.md), run against each workload server with and without
 * compression; [hasFloor]: a decoding task the raw-socket floor also runs.
 */
enum class Scenario(val key: String, val isWorkload: Boolean = false, val hasFloor: Boolean = false, val isOdm: Boolean = false) {
    PING_MONGO_JAVA_SERVER("ping-mongo-java-server"),
    PING_RESPONDER("ping-responder"),
    COLD_START("cold-start"),
    POOL_ONLY("pool-only"),
    WAITERS_100K("waiters-100k"),
    FAILOVER_STREAM("failover-stream"),
    FAILOVER_POLL("failover-poll"),
    FIND_ONE_BY_ID("find-one-by-id", isWorkload = true, hasFloor = true),
    SMALL_DOC_INSERT_ONE("small-doc-insert-one", isWorkload = true),
    LARGE_DOC_INSERT_ONE("large-doc-insert-one", isWorkload = true),
    FIND_MANY("find-many", isWorkload = true, hasFloor = true),
    SMALL_DOC_BULK_INSERT("small-doc-bulk-insert", isWorkload = true),
    LARGE_DOC_BULK_INSERT("large-doc-bulk-insert", isWorkload = true),
    SMALL_DOC_COLLECTION_BULK_WRITE_INSERT("small-doc-collection-bulk-write-insert", isWorkload = true),
    LARGE_DOC_COLLECTION_BULK_WRITE_INSERT("large-doc-collection-bulk-write-insert", isWorkload = true),
    SMALL_DOC_CLIENT_BULK_WRITE_INSERT("small-doc-client-bulk-write-insert", isWorkload = true),
    LARGE_DOC_CLIENT_BULK_WRITE_INSERT("large-doc-client-bulk-write-insert", isWorkload = true),
    SMALL_DOC_CLIENT_BULK_WRITE_MIXED("small-doc-client-bulk-write-mixed-operations", isWorkload = true),
    SMALL_DOC_COLLECTION_BULK_WRITE_MIXED("small-doc-collection-bulk-write-mixed-operations", isWorkload = true),
    GRIDFS_UPLOAD("gridfs-upload", isWorkload = true),
    GRIDFS_DOWNLOAD("gridfs-download", isWorkload = true),
    ODM_FLAT_SMALL_MODEL_CREATION("odm-flat-small-model-creation", isWorkload = true, isOdm = true),
    ODM_FLAT_SMALL_MODEL_UPDATE("odm-flat-small-model-update", isWorkload = true, isOdm = true),
    ODM_FLAT_SMALL_MODEL_FIND_BY_FILTER("odm-flat-small-model-find-by-filter", isWorkload = true, isOdm = true),
    ODM_FLAT_SMALL_MODEL_FIND_FOREIGN_KEY_BY_FILTER("odm-flat-small-model-find-foreign-key-by-filter", isWorkload = true, isOdm = true),
    ODM_NESTED_LARGE_MODEL_CREATION("odm-nested-large-model-creation", isWorkload = true, isOdm = true),
    ODM_NESTED_LARGE_MODEL_UPDATE_NESTED("odm-nested-large-model-update-nested", isWorkload = true, isOdm = true),
    ODM_NESTED_FIND_NESTED_BY_FILTER("odm-nested-large-model-find-nested-by-filter", isWorkload = true, isOdm = true),
    ODM_NESTED_FIND_NESTED_ARRAY_BY_FILTER("odm-nested-large-model-find-nested-array-by-filter", isWorkload = true, isOdm = true),
    LDJSON_MULTI_FILE_IMPORT("ldjson-multi-file-import", isWorkload = true),
    LDJSON_MULTI_FILE_EXPORT("ldjson-multi-file-export", isWorkload = true),
    GRIDFS_MULTI_FILE_UPLOAD("gridfs-multi-file-upload", isWorkload = true),
    GRIDFS_MULTI_FILE_DOWNLOAD("gridfs-multi-file-download", isWorkload = true);

    val isPing: Boolean get() = this == PING_RESPONDER || this == PING_MONGO_JAVA_SERVER

    companion object {
        fun of(key: String): Scenario = entries.firstOrNull { it.key == key }
            ?: throw IllegalArgumentException("unknown scenario '$key' (expected one of ${entries.joinToString { it.key }})")
    }
}

/** The metric keys of the report, in report order. */
object Metrics {
    val ORDER: List<String> = listOf(
        "opsPerSec", "p50Us", "p99Us", "p999Us", "maxWaitUs", "jain", "connectionsCreated",
        "cpuUsPerOp", "serverCpuUsPerOp", "allocBytesPerOp", "coldFirstPingMs", "topologyKnownMs", "pairNs",
        "heapMb", "drainMs", "detectMsP50", "detectMsMax",
        "mbPerSec", "medianMs", "cpuUsPerMb", "serverCpuUsPerMb", "allocBytesPerDoc", "iterations", "operations",
    )

    /** A workload cell's size, not a measurement: never compared between libraries. */
    val CELL_SIZE: Set<String> = setOf("iterations", "operations")

    /** Metrics where a smaller number is better (for the ratio table's reading direction). */
    val LOWER_IS_BETTER: Set<String> = setOf(
        "p50Us", "p99Us", "p999Us", "maxWaitUs", "connectionsCreated", "cpuUsPerOp", "serverCpuUsPerOp", "allocBytesPerOp",
        "coldFirstPingMs", "topologyKnownMs", "pairNs", "heapMb", "drainMs", "detectMsP50", "detectMsMax",
        "medianMs", "cpuUsPerMb", "serverCpuUsPerMb", "allocBytesPerDoc",
    )
}

/**
 * One report object: one (library, scenario, callers, maxPoolSize) cell, for a workload task one
 * (library, scenario, [server], [compressor]) cell. [metrics] holds the measured numbers by report
 * key (only those that apply); [notes] free-text remarks (for example why a cell was not measured).
 */
data class BenchRow(
    val library: Library,
    val scenario: Scenario,
    val callers: Int?,
    val maxPoolSize: Int?,
    val metrics: Map<String, Double>,
    val notes: String? = null,
    /** The workload server (`canned` or `mongo-java-server`); null for the other scenarios. */
    val server: String? = null,
    /** The workload cell's compressor (`none`, `zstd`); null for the other scenarios. */
    val compressor: String? = null,
) {
    /** The cell key: rows with equal keys are repetitions of one cell. */
    val cellKey: String get() = "${scenario.key}|${callers ?: "-"}|${maxPoolSize ?: "-"}|${server ?: "-"}|${compressor ?: "-"}"

    fun toJson(): JsonObject = buildJsonObject {
        put("library", JsonPrimitive(library.key))
        put("scenario", JsonPrimitive(scenario.key))
        callers?.let { put("callers", JsonPrimitive(it)) }
        maxPoolSize?.let { put("maxPoolSize", JsonPrimitive(it)) }
        server?.let { put("server", JsonPrimitive(it)) }
        compressor?.let { put("compressor", JsonPrimitive(it)) }
        val ordered = Metrics.ORDER.filter { it in metrics } + metrics.keys.filter { it !in Metrics.ORDER }.sorted()
        for (k in ordered) put(k, JsonPrimitive(round(metrics.getValue(k))))
        notes?.let { put("notes", JsonPrimitive(it)) }
    }

    companion object {
        private val IDENTITY = setOf("library", "scenario", "callers", "maxPoolSize", "notes", "server", "compressor")

        fun fromJson(o: JsonObject): BenchRow = BenchRow(
            library = Library.of(o.getValue("library").jsonPrimitive.content),
            scenario = Scenario.of(o.getValue("scenario").jsonPrimitive.content),
            callers = o["callers"]?.jsonPrimitive?.int,
            maxPoolSize = o["maxPoolSize"]?.jsonPrimitive?.int,
            metrics = o.filterKeys { it !in IDENTITY }.mapValues { (k, v) ->
                v.jsonPrimitive.doubleOrNull ?: throw IllegalArgumentException("metric '$k' is not a number: $v")
            },
            notes = o["notes"]?.jsonPrimitive?.content,
            server = o["server"]?.jsonPrimitive?.content,
            compressor = o["compressor"]?.jsonPrimitive?.content,
        )

        /** Three significant decimals for small numbers, whole numbers for large ones. */
        internal fun round(v: Double): Double = when {
            v.isNaN() || v.isInfinite() -> throw IllegalArgumentException("metric value must be finite, got $v")
            kotlin.math.abs(v) >= 1000 -> kotlin.math.round(v)
            else -> kotlin.math.round(v * 1000) / 1000
        }
    }
}
