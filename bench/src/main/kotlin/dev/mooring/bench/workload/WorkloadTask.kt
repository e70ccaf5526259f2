package dev.mooring.bench.workload

import dev.mooring.bench.report.Scenario

/**
 * The drivers' benchmark tasks (benchmarking.md, "Single-Doc" and "Multi-Doc Benchmarks") as the
 * spec defines them: the dataset file of `single_and_multi_document.tgz`, how many operations
 * (or documents) one iteration's "do task" phase makes, and the task's size for its score
 * ([datasetBytes]: the source file's size times the operations, as the spec gives it). The score
 * is [datasetBytes] in MB ÷ the median iteration's wall time.
 */
enum class WorkloadTask(
    val scenario: Scenario,
    val file: String,
    val operations: Int,
    val datasetBytes: Long,
    /** Documents one operation moves: 1, or for the LDJSON tasks the 5,000 documents of a file. */
    private val documentsPerOperation: Int = 1,
) {
    /** 10,000 finds by sequential `_id` (1..10,000), one document back each. */
    FIND_ONE_BY_ID(Scenario.FIND_ONE_BY_ID, "tweet.json", 10_000, 16_220_000),

    /** 10,000 `insertOne` of SMALL_DOC, the `_id` left to the library. */
    SMALL_DOC_INSERT_ONE(Scenario.SMALL_DOC_INSERT_ONE, "small_doc.json", 10_000, 2_750_000),

    /** 10 `insertOne` of LARGE_DOC. */
    LARGE_DOC_INSERT_ONE(Scenario.LARGE_DOC_INSERT_ONE, "large_doc.json", 10, 27_310_890),

    /** One find with an empty filter over 10,000 TWEETs, every document retrieved. */
    FIND_MANY(Scenario.FIND_MANY, "tweet.json", 10_000, 16_220_000),

    /** One ordered `insertMany` of 10,000 SMALL_DOCs. */
    SMALL_DOC_BULK_INSERT(Scenario.SMALL_DOC_BULK_INSERT, "small_doc.json", 10_000, 2_750_000),

    /** One ordered `insertMany` of 10 LARGE_DOCs. */
    LARGE_DOC_BULK_INSERT(Scenario.LARGE_DOC_BULK_INSERT, "large_doc.json", 10, 27_310_890),

    /** One ordered `Collection::bulkWrite` of 10,000 insert models of SMALL_DOC. */
    SMALL_DOC_COLLECTION_BULK_WRITE_INSERT(Scenario.SMALL_DOC_COLLECTION_BULK_WRITE_INSERT, "small_doc.json", 10_000, 2_750_000),

    /** One ordered `Collection::bulkWrite` of 10 insert models of LARGE_DOC. */
    LARGE_DOC_COLLECTION_BULK_WRITE_INSERT(Scenario.LARGE_DOC_COLLECTION_BULK_WRITE_INSERT, "large_doc.json", 10, 27_310_890),

    /** One ordered `Client::bulkWrite` of 10,000 insert models of SMALL_DOC on `perftest.corpus`. */
    SMALL_DOC_CLIENT_BULK_WRITE_INSERT(Scenario.SMALL_DOC_CLIENT_BULK_WRITE_INSERT, "small_doc.json", 10_000, 2_750_000),

    /** One ordered `Client::bulkWrite` of 10 insert models of LARGE_DOC on `perftest.corpus`. */
    LARGE_DOC_CLIENT_BULK_WRITE_INSERT(Scenario.LARGE_DOC_CLIENT_BULK_WRITE_INSERT, "large_doc.json", 10, 27_310_890),

    /**
     * One ordered `Client::bulkWrite` of 30,000 models: for each of 10,000 SMALL_DOC copies an insert, a replace
     * (empty filter, a copy) and a delete (empty filter) on `perftest.corpus_<i % 10 + 1>`; scored as 20,000 operations.
     */
    SMALL_DOC_CLIENT_BULK_WRITE_MIXED(Scenario.SMALL_DOC_CLIENT_BULK_WRITE_MIXED, "small_doc.json", 10_000, 5_500_000),

    /** One ordered `Collection::bulkWrite` of 30,000 models on `corpus`, as [SMALL_DOC_CLIENT_BULK_WRITE_MIXED]; scored as 20,000 operations. */
    SMALL_DOC_COLLECTION_BULK_WRITE_MIXED(Scenario.SMALL_DOC_COLLECTION_BULK_WRITE_MIXED, "small_doc.json", 10_000, 5_500_000),

    /** One upload of GRIDFS_LARGE (52,428,800 bytes of random data) into the default bucket, from memory. */
    GRIDFS_UPLOAD(Scenario.GRIDFS_UPLOAD, "gridfs_large.bin", 1, 52_428_800),

    /** One download of GRIDFS_LARGE by its `_id` into memory, the bytes discarded. */
    GRIDFS_DOWNLOAD(Scenario.GRIDFS_DOWNLOAD, "gridfs_large.bin", 1, 52_428_800),

    // ---- odm-benchmarking.md: scored with the spec's stated sizes (SMALL_DOC "250 bytes" × 10,000 = its "2.5 MB";
    // LARGE_DOC_NESTED "8,000 bytes" × 10,000; an update: `updated_value`'s 13 bytes × 10,000) ----

    /** 10,000 × a SMALL_DOC model with a new ObjectId `_id`, saved one by one (`insertOne`). */
    ODM_FLAT_SMALL_MODEL_CREATION(Scenario.ODM_FLAT_SMALL_MODEL_CREATION, "flat-models/small_doc.json", 10_000, 2_500_000),

    /** For each of 10,000 saved SMALL_DOC models, `field1` set to `updated_value` (an `updateOne` by `_id`). */
    ODM_FLAT_SMALL_MODEL_UPDATE(Scenario.ODM_FLAT_SMALL_MODEL_UPDATE, "flat-models/small_doc.json", 10_000, 130_000),

    /** For each of 10,000 saved SMALL_DOC models' `_id`, a find by that `_id` decoding the model. */
    ODM_FLAT_SMALL_MODEL_FIND_BY_FILTER(Scenario.ODM_FLAT_SMALL_MODEL_FIND_BY_FILTER, "flat-models/small_doc.json", 10_000, 2_500_000),

    /** For each of 10,000 FOREIGN_KEY models' `_id`, a find of the SMALL_DOC model whose `field_fk` references it. */
    ODM_FLAT_SMALL_MODEL_FIND_FOREIGN_KEY_BY_FILTER(Scenario.ODM_FLAT_SMALL_MODEL_FIND_FOREIGN_KEY_BY_FILTER, "flat-models/small_doc.json", 10_000, 2_500_000),

    /** 10,000 × a LARGE_DOC_NESTED model with a new ObjectId `_id`, saved one by one. */
    ODM_NESTED_LARGE_MODEL_CREATION(Scenario.ODM_NESTED_LARGE_MODEL_CREATION, "nested-models/large_doc_nested.json", 10_000, 80_000_000),

    /** For each of 10,000 saved LARGE_DOC_NESTED models, `embedded_str_doc_1.field1` set to `updated_value`. */
    ODM_NESTED_LARGE_MODEL_UPDATE_NESTED(Scenario.ODM_NESTED_LARGE_MODEL_UPDATE_NESTED, "nested-models/large_doc_nested.json", 10_000, 130_000),

    /** For each of 10,000 saved models' `embedded_str_doc_1.unique_id`, a find of the parent model by that value. */
    ODM_NESTED_FIND_NESTED_BY_FILTER(Scenario.ODM_NESTED_FIND_NESTED_BY_FILTER, "nested-models/large_doc_nested.json", 10_000, 80_000_000),

    /** For each of 10,000 saved models' first `embedded_str_doc_array` item's `unique_id`, a find of the parent model. */
    ODM_NESTED_FIND_NESTED_ARRAY_BY_FILTER(Scenario.ODM_NESTED_FIND_NESTED_ARRAY_BY_FILTER, "nested-models/large_doc_nested.json", 10_000, 80_000_000),

    // ---- benchmarking.md "Parallel": an operation is one file of the `parallel` tarball's directory; the size is the
    // spec's (565 MB for the 100 LDJSON files, 262.144 MB for the 50 GridFS files), scaled by the share of files a cell uses ----

    /** The 100 LDJSON files (5,000 documents each) read, parsed and inserted unordered into `corpus`, concurrently. */
    LDJSON_MULTI_FILE_IMPORT(Scenario.LDJSON_MULTI_FILE_IMPORT, "parallel/ldjson_multi", 100, 565_000_000, documentsPerOperation = 5_000),

    /** The 500,000 documents dumped into 100 LDJSON files of 5,000, written and flushed, concurrently. */
    LDJSON_MULTI_FILE_EXPORT(Scenario.LDJSON_MULTI_FILE_EXPORT, "parallel/ldjson_multi", 100, 565_000_000, documentsPerOperation = 5_000),

    /** The 50 files of 5 MiB uploaded from disk into the default bucket, concurrently. */
    GRIDFS_MULTI_FILE_UPLOAD(Scenario.GRIDFS_MULTI_FILE_UPLOAD, "parallel/gridfs_multi", 50, 262_144_000),

    /** The 50 files downloaded from the default bucket into files, written and flushed, concurrently. */
    GRIDFS_MULTI_FILE_DOWNLOAD(Scenario.GRIDFS_MULTI_FILE_DOWNLOAD, "parallel/gridfs_multi", 50, 262_144_000);

    /** An ODM task (odm-benchmarking.md): `@Serializable` models, Mooring and the coroutine driver only ([dev.mooring.bench.workload.OdmTaskOps]). */
    val isOdm: Boolean get() = scenario.isOdm

    /**
     * An ODM task that reads the documents it saved: the canned server stores nothing and answers finds with its one
     * canned document, not these models, so these run on mongo-java-server only. The ODM creation and update tasks also
     * run on the canned server (it acknowledges every insert, and every update as matching one document).
     */
    val isOdmFind: Boolean
        get() = this == ODM_FLAT_SMALL_MODEL_FIND_BY_FILTER || this == ODM_FLAT_SMALL_MODEL_FIND_FOREIGN_KEY_BY_FILTER ||
            this == ODM_NESTED_FIND_NESTED_BY_FILTER || this == ODM_NESTED_FIND_NESTED_ARRAY_BY_FILTER

    /**
     * Documents one iteration moves (for allocation per document): the copies of the dataset's document; for GridFS the
     * one file; for the parallel tasks the 500,000 LDJSON documents or the 50 GridFS files.
     */
    val documents: Int get() = operations * documentsPerOperation

    /**
     * A task of the spec's parallel suite ([dev.mooring.bench.workload.ParallelTaskOps]): an operation is one file of
     * [file]'s directory, and a cell may use fewer files ([dev.mooring.bench.worker.CellCommand.operations]).
     */
    val isParallel: Boolean get() = isLdjson || isGridFsMulti

    /** LDJSON multi-file import or export. */
    val isLdjson: Boolean get() = this == LDJSON_MULTI_FILE_IMPORT || this == LDJSON_MULTI_FILE_EXPORT

    /** GridFS multi-file upload or download: mongo-java-server only and no coroutine-driver cell, as [isGridFs]. */
    val isGridFsMulti: Boolean get() = this == GRIDFS_MULTI_FILE_UPLOAD || this == GRIDFS_MULTI_FILE_DOWNLOAD

    /** A `Collection::bulkWrite` or `Client::bulkWrite` task. */
    val isBulkWrite: Boolean get() = isCollectionBulkWrite || isClientBulkWrite

    /** A `Collection::bulkWrite` task. */
    val isCollectionBulkWrite: Boolean
        get() = this == SMALL_DOC_COLLECTION_BULK_WRITE_INSERT || this == LARGE_DOC_COLLECTION_BULK_WRITE_INSERT || this == SMALL_DOC_COLLECTION_BULK_WRITE_MIXED

    /**
     * A `Client::bulkWrite` task: the `bulkWrite` command of MongoDB 8.0+, which mongo-java-server does not
     * have, so these run on the canned server only.
     */
    val isClientBulkWrite: Boolean
        get() = this == SMALL_DOC_CLIENT_BULK_WRITE_INSERT || this == LARGE_DOC_CLIENT_BULK_WRITE_INSERT || this == SMALL_DOC_CLIENT_BULK_WRITE_MIXED

    /**
     * A GridFS task: the canned server stores nothing, so these run on mongo-java-server only; the Kotlin coroutine
     * driver has no GridFS API, so it has no cell.
     */
    val isGridFs: Boolean get() = this == GRIDFS_UPLOAD || this == GRIDFS_DOWNLOAD

    /** A mixed-operations task: insert, replace and delete models per document copy. */
    val isMixed: Boolean get() = this == SMALL_DOC_CLIENT_BULK_WRITE_MIXED || this == SMALL_DOC_COLLECTION_BULK_WRITE_MIXED

    /** The collections the task writes to: `corpus`, or `corpus_1` … `corpus_10` for the client mixed task. */
    val collections: List<String>
        get() = if (this == SMALL_DOC_CLIENT_BULK_WRITE_MIXED) List(MIXED_NAMESPACES) { "corpus_${it + 1}" } else listOf(collection)

    /** The spec's database and collection (the LDJSON export's: [EXPORT_COLLECTION]). */
    val database: String get() = "perftest"
    val collection: String get() = if (this == LDJSON_MULTI_FILE_EXPORT) EXPORT_COLLECTION else "corpus"

    companion object {
        /** The numbered collections of the client mixed task. */
        const val MIXED_NAMESPACES = 10

        /**
         * The LDJSON export's collection, instead of the spec's `corpus`: the canned server answers a find on
         * `perftest.corpus_export` with LDJSON documents and one on `perftest.corpus` with TWEETs (find-many).
         */
        const val EXPORT_COLLECTION = "corpus_export"

        fun of(scenario: Scenario): WorkloadTask = entries.firstOrNull { it.scenario == scenario }
            ?: throw IllegalArgumentException("${scenario.key} is not a workload task")
    }
}
