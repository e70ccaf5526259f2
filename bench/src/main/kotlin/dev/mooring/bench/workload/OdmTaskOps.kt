package dev.mooring.bench.workload

import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.runBlocking
import kotlinx.serialization.json.Json
import org.bson.types.ObjectId
import kotlin.coroutines.EmptyCoroutineContext

/**
 * An ODM task (odm-benchmarking.md, "Flat models" and "Nested models") for one library, over the library's typed
 * collections of the `@Serializable` models ([SmallModel], [ForeignKeyModel], [LargeNestedModel]) in `perftest`.
 * The dataset's JSON is decoded into its model once, in setup (kotlinx.serialization's `Json`, the same for every
 * library); the timed phase works on models only. [operations] is the task's (10,000) unless a test scales it down.
 *
 * Phases, as the spec gives them:
 * - creation: before each iteration the model's collection is dropped (the spec drops it after each; the same
 *   state at every timed phase); the timed phase saves [operations] copies of the model, each with a new `_id`,
 *   one by one;
 * - update: setup saves [operations] models (one `insertMany`, untimed); the timed phase sets `field1` (flat) or
 *   `embedded_str_doc_1.field1` (nested) to `updated_value` on each, one `updateOne` by `_id` each, every one
 *   matching its document. The nested update keeps the collection between iterations: the spec's "drop after the
 *   task" would leave the next iteration nothing to update;
 * - find by filter: setup saves [operations] models; the timed phase finds each by its `_id`, decoding the model;
 * - find foreign key by filter: setup saves [operations] FOREIGN_KEY models and as many SMALL_DOC models, each
 *   referencing one in `field_fk`; the timed phase finds, for each FOREIGN_KEY `_id`, the model referencing it;
 * - find nested (array) by filter: setup saves [operations] models with distinct `unique_id`s in every embedded
 *   document; the timed phase finds each parent model by its `embedded_str_doc_1.unique_id` (or its first
 *   `embedded_str_doc_array` item's).
 *
 * The fields a find filters on other than `_id` get a unique index in setup, as an ODM declares a lookup field
 * (mongo-java-server answers an equality filter from a unique index; without one each find scans the collection).
 * Every find must return the one model it looks for, every update match one document, or the iteration fails.
 */
abstract class OdmTaskOps(
    protected val task: WorkloadTask,
    private val dispatcher: CoroutineDispatcher?,
    private val operations: Int = task.operations,
) : TaskOps {
    protected abstract suspend fun dropDatabase()
    protected abstract suspend fun dropCollection(collection: String)
    protected abstract suspend fun createUniqueIndex(collection: String, field: String)
    protected abstract suspend fun insertSmall(model: SmallModel)
    protected abstract suspend fun insertManySmall(models: List<SmallModel>)
    protected abstract suspend fun insertManyForeignKeys(models: List<ForeignKeyModel>)
    protected abstract suspend fun insertNested(model: LargeNestedModel)
    protected abstract suspend fun insertManyNested(models: List<LargeNestedModel>)

    /** `{$set: {[field]: [value]}}` on the document of [collection] with `_id` [id]; returns the matched count. */
    protected abstract suspend fun setField(collection: String, id: ObjectId, field: String, value: String): Long

    /** The first [SmallModel] whose [field] equals [value], or null. */
    protected abstract suspend fun findSmall(field: String, value: ObjectId): SmallModel?

    /** The first [LargeNestedModel] whose [field] equals [value], or null. */
    protected abstract suspend fun findNested(field: String, value: String): LargeNestedModel?

    private var small: SmallModel? = null
    private var nested: LargeNestedModel? = null
    private var ids: List<ObjectId> = emptyList()
    private var keys: List<String> = emptyList()

    private fun <T> blocking(block: suspend () -> T): T = runBlocking(dispatcher ?: EmptyCoroutineContext) { block() }

    override fun setup() = blocking {
        val json = Datasets.text(task)
        val flat = task.file.startsWith("flat-models/")
        if (flat) small = Json.decodeFromString(SmallModel.serializer(), json) else nested = Json.decodeFromString(LargeNestedModel.serializer(), json)
        dropDatabase()
        when (task) {
            WorkloadTask.ODM_FLAT_SMALL_MODEL_UPDATE, WorkloadTask.ODM_FLAT_SMALL_MODEL_FIND_BY_FILTER -> {
                val models = List(operations) { small().copy(id = ObjectId()) }
                insertManySmall(models)
                ids = models.map { it.id }
            }
            WorkloadTask.ODM_FLAT_SMALL_MODEL_FIND_FOREIGN_KEY_BY_FILTER -> {
                val fks = List(operations) { i -> ForeignKeyModel(ObjectId(), "foreign key ${i + 1}") }
                insertManyForeignKeys(fks)
                createUniqueIndex(SMALL, "field_fk")
                insertManySmall(fks.map { small().copy(id = ObjectId(), fieldFk = it.id) })
                ids = fks.map { it.id }
            }
            WorkloadTask.ODM_NESTED_LARGE_MODEL_UPDATE_NESTED, WorkloadTask.ODM_NESTED_FIND_NESTED_BY_FILTER, WorkloadTask.ODM_NESTED_FIND_NESTED_ARRAY_BY_FILTER -> {
                if (task == WorkloadTask.ODM_NESTED_FIND_NESTED_BY_FILTER) createUniqueIndex(NESTED, "embedded_str_doc_1.unique_id")
                if (task == WorkloadTask.ODM_NESTED_FIND_NESTED_ARRAY_BY_FILTER) createUniqueIndex(NESTED, "embedded_str_doc_array.unique_id")
                val models = List(operations) { withUniqueIds(nested()) }
                // a batch of large models at a time: the insert commands stay small
                models.chunked(NESTED_INSERT_BATCH).forEach { insertManyNested(it) }
                ids = models.map { it.id }
                keys = if (task == WorkloadTask.ODM_NESTED_FIND_NESTED_ARRAY_BY_FILTER) models.map { it.embeddedStrDocArray.first().uniqueId } else models.map { it.embeddedStrDoc1.uniqueId }
            }
            else -> Unit
        }
    }

    override fun beforeTask() {
        when (task) {
            WorkloadTask.ODM_FLAT_SMALL_MODEL_CREATION -> blocking { dropCollection(SMALL) }
            WorkloadTask.ODM_NESTED_LARGE_MODEL_CREATION -> blocking { dropCollection(NESTED) }
            else -> Unit
        }
    }

    override fun doTask() = blocking {
        when (task) {
            WorkloadTask.ODM_FLAT_SMALL_MODEL_CREATION -> {
                val model = small()
                repeat(operations) { insertSmall(model.copy(id = ObjectId())) }
            }
            WorkloadTask.ODM_NESTED_LARGE_MODEL_CREATION -> {
                val model = nested()
                repeat(operations) { insertNested(model.copy(id = ObjectId())) }
            }
            WorkloadTask.ODM_FLAT_SMALL_MODEL_UPDATE -> for (id in ids) matchedOne(id, setField(SMALL, id, "field1", UPDATED_VALUE))
            WorkloadTask.ODM_NESTED_LARGE_MODEL_UPDATE_NESTED -> for (id in ids) matchedOne(id, setField(NESTED, id, "embedded_str_doc_1.field1", UPDATED_VALUE))
            WorkloadTask.ODM_FLAT_SMALL_MODEL_FIND_BY_FILTER -> for (id in ids) check(findSmall("_id", id)?.id == id) { "no model with _id $id" }
            WorkloadTask.ODM_FLAT_SMALL_MODEL_FIND_FOREIGN_KEY_BY_FILTER -> for (id in ids) check(findSmall("field_fk", id)?.fieldFk == id) { "no model with field_fk $id" }
            WorkloadTask.ODM_NESTED_FIND_NESTED_BY_FILTER -> for (k in keys) check(findNested("embedded_str_doc_1.unique_id", k)?.embeddedStrDoc1?.uniqueId == k) { "no model with embedded_str_doc_1.unique_id $k" }
            WorkloadTask.ODM_NESTED_FIND_NESTED_ARRAY_BY_FILTER -> for (k in keys) {
                check(findNested("embedded_str_doc_array.unique_id", k)?.embeddedStrDocArray?.first()?.uniqueId == k) { "no model with embedded_str_doc_array.unique_id $k" }
            }
            else -> throw IllegalArgumentException("${task.scenario.key} is not an ODM task")
        }
    }

    private fun small(): SmallModel = checkNotNull(small) { "setup has not run" }
    private fun nested(): LargeNestedModel = checkNotNull(nested) { "setup has not run" }

    private fun matchedOne(id: ObjectId, matched: Long) = check(matched == 1L) { "the update of _id $id matched $matched documents" }

    /** [model] with a new `_id` and a new `unique_id` in every embedded string document. */
    private fun withUniqueIds(model: LargeNestedModel): LargeNestedModel {
        fun EmbeddedStrDoc.unique() = copy(uniqueId = ObjectId().toHexString())
        return model.copy(
            id = ObjectId(),
            embeddedStrDoc1 = model.embeddedStrDoc1.unique(),
            embeddedStrDoc2 = model.embeddedStrDoc2.unique(),
            embeddedStrDoc3 = model.embeddedStrDoc3.unique(),
            embeddedStrDoc4 = model.embeddedStrDoc4.unique(),
            embeddedStrDoc5 = model.embeddedStrDoc5.unique(),
            embeddedStrDocArray = model.embeddedStrDocArray.map { it.unique() },
        )
    }

    companion object {
        /** The collections of the SMALL_DOC, FOREIGN_KEY and LARGE_DOC_NESTED models, in `perftest`. */
        const val SMALL = "small_doc"
        const val FOREIGN_KEY = "foreign_key"
        const val NESTED = "large_doc_nested"

        /** The spec's `updated_value` (13 bytes). */
        const val UPDATED_VALUE = "updated_value"

        private const val NESTED_INSERT_BATCH = 1_000
    }
}
