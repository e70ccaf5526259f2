package dev.mooring.spec.unified

import dev.mooring.driver.MongoCollection
import dev.mooring.driver.MongoDatabase
import dev.mooring.sdam.MongoCluster
import java.util.concurrent.ConcurrentHashMap
import dev.mooring.driver.database
import kotlinx.coroutines.flow.toList
import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonNull
import org.bson.BsonString
import org.bson.BsonValue

/**
 * The unified format's collection CRUD helpers (unified-test-format.md "Collection Operations")
 * run through the public driver API: a [MongoCollection] of the test's [MongoDatabase] (one per
 * client and database name for the whole test, as an application keeps its database objects, so
 * the driver's per-database state such as its server limits is learned once), with the entity's
 * read preference, read concern, write concern and timeoutMS applied by its `with…` copies, the
 * arguments mapped by [DriverOptions] and the results shaped by [DriverResults]. One instance per
 * test run; thread-safe (operations on runner threads may share it).
 */
class DriverCrud {
    private val databases = ConcurrentHashMap<Pair<MongoCluster, String>, MongoDatabase>()

    /** The database of [t] with its entity options. */
    fun database(t: CrudTarget): MongoDatabase {
        var db = databases.computeIfAbsent(t.cluster to t.database) { (cluster, name) -> cluster.database(name) }
        t.options.readPreference?.let { db = db.withReadPreference(it) }
        t.options.readConcern?.let { db = db.withReadConcern(DriverOptions.readConcern(it)) }
        t.options.writeConcern?.let { db = db.withWriteConcern(DriverOptions.writeConcern(it)) }
        t.options.timeoutMS?.let { db = db.withTimeout(it) }
        return db
    }

    /** The collection of [t] with its entity options. */
    fun collection(t: CrudTarget): MongoCollection<BsonDocument> {
        val db = databases.computeIfAbsent(t.cluster to t.database) { (cluster, name) -> cluster.database(name) }
        var c = db.collection(t.collection ?: throw IllegalArgumentException("a collection helper needs a collection entity"))
        t.options.readPreference?.let { c = c.withReadPreference(it) }
        t.options.readConcern?.let { c = c.withReadConcern(DriverOptions.readConcern(it)) }
        t.options.writeConcern?.let { c = c.withWriteConcern(DriverOptions.writeConcern(it)) }
        t.options.timeoutMS?.let { c = c.withTimeout(it) }
        return c
    }

    /** Runs the helper [name] (one of [OPERATIONS]) with [a] on [t]; its crud.md-shaped result, or null. */
    suspend fun execute(name: String, t: CrudTarget, a: CrudOperations.Args): BsonValue? {
        val c = collection(t)
        val s = t.session
        return when (name) {
            "insertOne" -> DriverResults.insertOne(c.insertOne(a.doc("document"), DriverOptions.insertOne(a), s))
            "insertMany" -> DriverResults.insertMany(c.insertMany(a.array("documents").map { it.asDocument() }, DriverOptions.insertMany(a), s))
            "updateOne" -> DriverResults.update(c.updateOne(a.doc("filter"), DriverOptions.update(a.value("update")), DriverOptions.update(name, a), s))
            "updateMany" -> DriverResults.update(c.updateMany(a.doc("filter"), DriverOptions.update(a.value("update")), DriverOptions.update(name, a), s))
            "replaceOne" -> DriverResults.update(c.replaceOne(a.doc("filter"), a.doc("replacement"), DriverOptions.replace(a), s))
            "deleteOne" -> DriverResults.delete(c.deleteOne(a.doc("filter"), DriverOptions.delete(name, a), s))
            "deleteMany" -> DriverResults.delete(c.deleteMany(a.doc("filter"), DriverOptions.delete(name, a), s))
            "findOneAndUpdate" -> c.findOneAndUpdate(a.doc("filter"), DriverOptions.update(a.value("update")), DriverOptions.findOneAndUpdate(a), s) ?: BsonNull.VALUE
            "findOneAndReplace" -> c.findOneAndReplace(a.doc("filter"), a.doc("replacement"), DriverOptions.findOneAndReplace(a), s) ?: BsonNull.VALUE
            "findOneAndDelete" -> c.findOneAndDelete(a.doc("filter"), DriverOptions.findOneAndDelete(a), s) ?: BsonNull.VALUE
            "bulkWrite" -> DriverResults.bulkWrite(c.bulkWrite(a.array("requests").map { DriverOptions.writeModel(it.asDocument()) }, DriverOptions.bulkWrite(a), s))
            "find" -> BsonArray(c.find(a.optional("filter")?.asDocument() ?: BsonDocument(), DriverOptions.find(name, a), s).toList())
            "findOne" -> c.find(a.optional("filter")?.asDocument() ?: BsonDocument(), DriverOptions.find(name, a), s).toList().firstOrNull() ?: BsonNull.VALUE
            "aggregate" -> BsonArray(c.aggregate(a.array("pipeline").map { it.asDocument() }, DriverOptions.aggregate(a), s).toList())
            "countDocuments" -> DriverResults.count(c.countDocuments(a.doc("filter"), DriverOptions.countDocuments(a), s))
            "estimatedDocumentCount" -> DriverResults.count(c.estimatedDocumentCount(DriverOptions.estimatedDocumentCount(a), s))
            "distinct" -> BsonArray(c.distinct(BsonString(a.string("fieldName")).value, a.doc("filter"), DriverOptions.distinct(a), s))
            "drop" -> {
                DriverOptions.requireKnown(name, a, emptySet())
                c.drop(s)
                null
            }
            else -> throw UnsupportedOperationException("driver CRUD helper $name")
        }
    }

    companion object {
        /** The helpers run here. */
        val OPERATIONS: Set<String> = setOf(
            "insertOne", "insertMany", "updateOne", "updateMany", "replaceOne", "deleteOne", "deleteMany",
            "findOneAndUpdate", "findOneAndReplace", "findOneAndDelete", "bulkWrite", "find", "findOne", "aggregate",
            "countDocuments", "estimatedDocumentCount", "distinct", "drop",
        )
    }
}
