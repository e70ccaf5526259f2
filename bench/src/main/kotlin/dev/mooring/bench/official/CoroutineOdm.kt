package dev.mooring.bench.official

import com.mongodb.client.model.Filters
import com.mongodb.client.model.IndexOptions
import com.mongodb.client.model.Indexes
import com.mongodb.client.model.Updates
import com.mongodb.kotlin.client.coroutine.MongoClient as CoroutineClient
import dev.mooring.bench.workload.ForeignKeyModel
import dev.mooring.bench.workload.LargeNestedModel
import dev.mooring.bench.workload.OdmTaskOps
import dev.mooring.bench.workload.SmallModel
import dev.mooring.bench.workload.WorkloadTask
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.flow.firstOrNull
import org.bson.Document
import org.bson.types.ObjectId

/**
 * An ODM task through the official Kotlin coroutine driver's typed collections (`getCollection<T>()`, whose default
 * codec registry encodes `@Serializable` classes with bson-kotlinx), its callers on `Dispatchers.Default` as Mooring's.
 */
internal class CoroutineOdm(task: WorkloadTask, target: String, operations: Int = task.operations) : OdmTaskOps(task, Dispatchers.Default, operations) {
    private val client = CoroutineClient.create(OfficialClients.settings(target, null))
    private val db = client.getDatabase(task.database)
    private val small = db.getCollection<SmallModel>(SMALL)
    private val foreignKeys = db.getCollection<ForeignKeyModel>(FOREIGN_KEY)
    private val nested = db.getCollection<LargeNestedModel>(NESTED)

    override suspend fun dropDatabase() = db.drop()
    override suspend fun dropCollection(collection: String) = db.getCollection<Document>(collection).drop()
    override suspend fun createUniqueIndex(collection: String, field: String) {
        db.getCollection<Document>(collection).createIndex(Indexes.ascending(field), IndexOptions().unique(true))
    }

    override suspend fun insertSmall(model: SmallModel) {
        small.insertOne(model)
    }

    override suspend fun insertManySmall(models: List<SmallModel>) {
        small.insertMany(models)
    }

    override suspend fun insertManyForeignKeys(models: List<ForeignKeyModel>) {
        foreignKeys.insertMany(models)
    }

    override suspend fun insertNested(model: LargeNestedModel) {
        nested.insertOne(model)
    }

    override suspend fun insertManyNested(models: List<LargeNestedModel>) {
        nested.insertMany(models)
    }

    override suspend fun setField(collection: String, id: ObjectId, field: String, value: String): Long {
        val c = if (collection == SMALL) small else nested
        return c.updateOne(Filters.eq("_id", id), Updates.set(field, value)).matchedCount
    }

    override suspend fun findSmall(field: String, value: ObjectId): SmallModel? = small.find(Filters.eq(field, value)).firstOrNull()
    override suspend fun findNested(field: String, value: String): LargeNestedModel? = nested.find(Filters.eq(field, value)).firstOrNull()

    override fun close() = client.close()
}
