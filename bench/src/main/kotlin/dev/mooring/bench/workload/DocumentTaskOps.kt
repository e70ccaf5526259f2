package dev.mooring.bench.workload

import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.runBlocking
import org.bson.BsonDocument
import org.bson.BsonInt32
import kotlin.coroutines.EmptyCoroutineContext

/**
 * A workload task for one library, phased as benchmarking.md says, over the library's own
 * operations ([dropDatabase], [dropCollection], [createCollection], [insertOne], [insertMany], [findOneById],
 * [findAll], and for the bulk-write tasks [collectionBulkWrite] and [clientBulkWrite], which turn [BulkOp]s into the
 * library's own models before the timed phase). They are `suspend` so a coroutine library runs a whole iteration inside one
 * coroutine; a blocking library just blocks in them. [doTask] runs on [dispatcher] (null: the
 * calling thread) inside one `runBlocking` per iteration.
 *
 * Documents are `BsonDocument`s for every library ("a language-appropriate document type"). The
 * official drivers add a generated `_id` to the `BsonDocument` they insert ([insertAddsId]): an
 * insertOne's document has it removed after each insert and an insertMany gets copies made
 * before the timed phase, so that every library sends the same documents without an `_id`; a bulk-write task's
 * models are likewise rebuilt from fresh copies before each iteration for those libraries.
 *
 * Bulk-write tasks (benchmarking.md): before each iteration the `corpus` collection is dropped and created (the
 * client mixed task drops the database and creates `corpus_1` … `corpus_10`); the timed phase is one ordered bulk
 * write, whose acknowledged writes (inserted + matched + deleted) must be one per model.
 */
abstract class DocumentTaskOps(
    protected val task: WorkloadTask,
    private val dispatcher: CoroutineDispatcher?,
    /** The operations of a find-one or insert-one iteration: the task's, unless the plan scales it down ([DocumentTaskOps.scalable]). */
    private val operations: Int = task.operations,
) : TaskOps {
    protected abstract suspend fun dropDatabase()
    protected abstract suspend fun dropCollection()
    protected abstract suspend fun createCollection(name: String)
    protected abstract suspend fun insertOne(document: BsonDocument)
    protected abstract suspend fun insertMany(documents: List<BsonDocument>)

    /** Finds the document with `_id` [id]; true when one came back. */
    protected abstract suspend fun findOneById(id: Int): Boolean

    /** Finds every document of the collection with an empty filter and returns how many came back. */
    protected abstract suspend fun findAll(): Int

    /** [ops] as one ordered `Collection::bulkWrite` on `perftest.corpus` (every op's collection is `corpus`). */
    protected abstract fun collectionBulkWrite(ops: List<BulkOp>): PreparedBulkWrite

    /** [ops] as one ordered `Client::bulkWrite`, each on `perftest.<op's collection>`. */
    protected abstract fun clientBulkWrite(ops: List<BulkOp>): PreparedBulkWrite

    /** True when [insertOne]/[insertMany] add an `_id` to the caller's document. */
    protected open val insertAddsId: Boolean get() = true

    init {
        require(operations == task.operations || task in scalable) { "${task.scenario.key} runs its own ${task.operations} operations, not $operations" }
        require(!task.isOdm) { "${task.scenario.key} is an ODM task: OdmTaskOps runs it (Mooring and the coroutine driver only)" }
    }

    private val document: BsonDocument = Datasets.document(task)
    private var batch: List<BsonDocument> = emptyList()
    private var bulk: PreparedBulkWrite? = null
    private var bulkSize = 0L

    private fun <T> blocking(block: suspend () -> T): T = runBlocking(dispatcher ?: EmptyCoroutineContext) { block() }

    override fun setup() = blocking {
        dropDatabase()
        when (task) {
            WorkloadTask.FIND_ONE_BY_ID -> insertMany(List(operations) { i -> BsonDocument("_id", BsonInt32(i + 1)).also { d -> document.forEach { (k, v) -> d[k] = v } } })
            WorkloadTask.FIND_MANY -> insertMany(List(task.operations) { document.clone() })
            else -> Unit
        }
    }

    override fun beforeTask() {
        if (task == WorkloadTask.FIND_ONE_BY_ID || task == WorkloadTask.FIND_MANY) return
        blocking {
            if (task == WorkloadTask.SMALL_DOC_CLIENT_BULK_WRITE_MIXED) {
                dropDatabase()
            } else {
                dropCollection()
            }
            for (name in task.collections) createCollection(name)
        }
        if (task.isBulkWrite && (insertAddsId || bulk == null)) {
            val ops = BulkOp.of(task, document, copies = insertAddsId, count = operations)
            bulkSize = BulkOp.expectedAcknowledged(ops)
            bulk = if (task.isClientBulkWrite) clientBulkWrite(ops) else collectionBulkWrite(ops)
        }
        if (task == WorkloadTask.SMALL_DOC_BULK_INSERT || task == WorkloadTask.LARGE_DOC_BULK_INSERT) {
            batch = if (insertAddsId) List(task.operations) { document.clone() } else List(task.operations) { document }
        }
    }

    override fun doTask() = blocking {
        when (task) {
            WorkloadTask.FIND_ONE_BY_ID -> for (id in 1..operations) check(findOneById(id)) { "no document with _id $id" }
            WorkloadTask.FIND_MANY -> findAll().let { n -> check(n == task.operations) { "find returned $n documents, expected ${task.operations}" } }
            WorkloadTask.SMALL_DOC_INSERT_ONE, WorkloadTask.LARGE_DOC_INSERT_ONE -> repeat(operations) {
                insertOne(document)
                if (insertAddsId) document.remove("_id")
            }
            WorkloadTask.SMALL_DOC_BULK_INSERT, WorkloadTask.LARGE_DOC_BULK_INSERT -> insertMany(batch)
            else -> {
                val n = checkNotNull(bulk) { "${task.scenario.key}: no models" }.execute()
                check(n == bulkSize) { "${task.scenario.key}: $n writes acknowledged, expected $bulkSize" }
            }
        }
    }

    companion object {
        /**
         * The tasks of one command per operation that a plan may scale down (quick mode): find one by `_id`, small doc
         * insertOne, and the collection mixed bulk write (an ordered bulk write of alternating kinds: one command per model).
         */
        val scalable: Set<WorkloadTask> = setOf(WorkloadTask.FIND_ONE_BY_ID, WorkloadTask.SMALL_DOC_INSERT_ONE, WorkloadTask.SMALL_DOC_COLLECTION_BULK_WRITE_MIXED)
    }
}
