package dev.mooring.bench.workload

import dev.mooring.bench.report.Scenario

/**
 * The drivers' benchmark tasks (benchmarking.md, "Single-Doc" and "Multi-Doc Benchmarks") as the
 * spec defines them: the dataset file of `single_and_multi_document.tgz`, how many operations
 * (or documents) one iteration's "do task" phase makes, and the task's size for its score
 * ([datasetBytes]: the source file's size times the operations, as the spec gives it). The score
 * is [datasetBytes] in MB ÷ the median iteration's wall time.
 */
enum class WorkloadTask(val scenario: Scenario, val file: String, val operations: Int, val datasetBytes: Long) {
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
    LARGE_DOC_BULK_INSERT(Scenario.LARGE_DOC_BULK_INSERT, "large_doc.json", 10, 27_310_890);

    /** Documents one iteration moves (for allocation per document). */
    val documents: Int get() = operations

    /** The spec's database and collection. */
    val database: String get() = "perftest"
    val collection: String get() = "corpus"

    companion object {
        fun of(scenario: Scenario): WorkloadTask = entries.firstOrNull { it.scenario == scenario }
            ?: throw IllegalArgumentException("${scenario.key} is not a workload task")
    }
}
