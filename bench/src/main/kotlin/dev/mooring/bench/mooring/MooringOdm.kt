package dev.mooring.bench.mooring

import dev.mooring.bench.workload.ForeignKeyModel
import dev.mooring.bench.workload.LargeNestedModel
import dev.mooring.bench.workload.OdmTaskOps
import dev.mooring.bench.workload.SmallModel
import dev.mooring.bench.workload.WorkloadTask
import dev.mooring.driver.IndexOptions
import dev.mooring.driver.MongoDatabase
import dev.mooring.driver.Update
import dev.mooring.driver.UpdateResult
import dev.mooring.driver.collection
import dev.mooring.driver.database
import dev.mooring.sdam.MongoCluster
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.flow.firstOrNull
import kotlinx.coroutines.runBlocking
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonObjectId
import org.bson.BsonString
import org.bson.types.ObjectId

/**
 * An ODM task through Mooring's typed collections (`collection<T>()`, kotlinx.serialization over bson-kotlinx),
 * its callers on `Dispatchers.Default` as a Kotlin service's are ([MooringWorkload]'s).
 */
internal class MooringOdm(task: WorkloadTask, target: String, operations: Int = task.operations) : OdmTaskOps(task, Dispatchers.Default, operations) {
    private val cluster = MongoCluster(target)
    private val db: MongoDatabase = cluster.database(task.database)
    private val small = db.collection<SmallModel>(SMALL)
    private val foreignKeys = db.collection<ForeignKeyModel>(FOREIGN_KEY)
    private val nested = db.collection<LargeNestedModel>(NESTED)

    override suspend fun dropDatabase() = db.drop()
    override suspend fun dropCollection(collection: String) = db.collection(collection).drop()
    override suspend fun createUniqueIndex(collection: String, field: String) {
        db.collection(collection).createIndex(BsonDocument(field, BsonInt32(1)), IndexOptions(unique = true))
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
        val update = Update.Operators(BsonDocument("\$set", BsonDocument(field, BsonString(value))))
        val c = if (collection == SMALL) small else nested
        return when (val r = c.updateOne(BsonDocument("_id", BsonObjectId(id)), update)) {
            is UpdateResult.Acknowledged -> r.matchedCount
            else -> error("an acknowledged write concern was expected")
        }
    }

    override suspend fun findSmall(field: String, value: ObjectId): SmallModel? = small.find(BsonDocument(field, BsonObjectId(value))).firstOrNull()
    override suspend fun findNested(field: String, value: String): LargeNestedModel? = nested.find(BsonDocument(field, BsonString(value))).firstOrNull()

    override fun close() = runBlocking { cluster.closeSuspending() }
}
