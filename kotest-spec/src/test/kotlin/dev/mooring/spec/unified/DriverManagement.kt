package dev.mooring.spec.unified

import dev.mooring.driver.AggregateOptions
import dev.mooring.driver.ClusteredIndexOptions
import dev.mooring.driver.CommitQuorum
import dev.mooring.driver.CreateCollectionOptions
import dev.mooring.driver.CreateIndexOptions
import dev.mooring.driver.DropIndexOptions
import dev.mooring.driver.IndexOptions
import dev.mooring.driver.ListCollectionsOptions
import dev.mooring.driver.ListIndexesOptions
import dev.mooring.driver.MongoDatabase
import dev.mooring.driver.SearchIndexModel
import dev.mooring.driver.TimeSeriesGranularity
import dev.mooring.driver.TimeSeriesOptions
import dev.mooring.driver.ValidationAction
import dev.mooring.driver.ValidationLevel
import dev.mooring.driver.listDatabaseNames
import dev.mooring.driver.database
import dev.mooring.driver.listDatabases
import kotlinx.coroutines.flow.toList
import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonString
import org.bson.BsonValue

/**
 * The unified format's index, search index and collection management helpers and the
 * database-level aggregate (unified-test-format.md "Database Operations", "Collection
 * Operations", "Client Operations"; index-management.md, enumerate-collections.md) run through
 * the public driver API: [MongoDatabase], its collections and `MongoCluster.listDatabases`.
 * Every argument maps to a driver option or fails the operation naming it
 * ([DriverOptions.requireKnown]). One instance per test run, sharing [crud]'s databases.
 */
class DriverManagement(private val crud: DriverCrud) {
    /** Runs the helper [name] (one of [OPERATIONS]) with [a] on [t]; its result, or null. */
    suspend fun execute(name: String, t: CrudTarget, a: CrudOperations.Args): BsonValue? {
        val s = t.session
        return when (name) {
            "aggregate" -> {
                val options = DriverOptions.aggregate(a)
                BsonArray(crud.database(t).aggregate(a.array("pipeline").map { it.asDocument() }, options, s).toList())
            }
            "createIndex" -> {
                DriverOptions.requireKnown(name, a, setOf("keys") + INDEX_OPTIONS + CREATE_INDEX_OPTIONS)
                BsonString(crud.collection(t).createIndex(a.doc("keys"), indexOptions(a), createIndexOptions(a), s))
            }
            "dropIndex" -> {
                DriverOptions.requireKnown(name, a, setOf("name", "maxTimeMS", "comment", "rawData"))
                crud.collection(t).dropIndex(a.string("name"), dropIndexOptions(a), s)
                null
            }
            "dropIndexes" -> {
                DriverOptions.requireKnown(name, a, setOf("maxTimeMS", "comment", "rawData"))
                crud.collection(t).dropIndexes(dropIndexOptions(a), s)
                null
            }
            "listIndexes" -> {
                DriverOptions.requireKnown(name, a, setOf("batchSize", "comment", "timeoutMode", "rawData"))
                val options = ListIndexesOptions(a.int("batchSize"), a.optional("comment"), CursorOperations.timeoutMode(a), with(DriverOptions) { a.rawData() })
                BsonArray(crud.collection(t).listIndexes(options, s).toList())
            }
            "listIndexNames" -> {
                DriverOptions.requireKnown(name, a, emptySet())
                BsonArray(crud.collection(t).listIndexNames(s).map { BsonString(it) })
            }
            "createSearchIndex" -> {
                DriverOptions.requireKnown(name, a, setOf("model"))
                BsonString(crud.collection(t).createSearchIndex(searchIndexModel(a.doc("model")), s))
            }
            "createSearchIndexes" -> {
                DriverOptions.requireKnown(name, a, setOf("models"))
                BsonArray(crud.collection(t).createSearchIndexes(a.array("models").map { searchIndexModel(it.asDocument()) }, s).map { BsonString(it) })
            }
            "updateSearchIndex" -> {
                DriverOptions.requireKnown(name, a, setOf("name", "definition"))
                crud.collection(t).updateSearchIndex(a.string("name"), a.doc("definition"), s)
                null
            }
            "dropSearchIndex" -> {
                DriverOptions.requireKnown(name, a, setOf("name"))
                crud.collection(t).dropSearchIndex(a.string("name"), s)
                null
            }
            "listSearchIndexes" -> {
                DriverOptions.requireKnown(name, a, setOf("name", "aggregationOptions"))
                val options = a.optional("aggregationOptions")?.let { DriverOptions.aggregate(CrudOperations.Args.of(it.asDocument())) } ?: AggregateOptions()
                BsonArray(crud.collection(t).listSearchIndexes(a.optional("name")?.asString()?.value, options, s).toList())
            }
            "createCollection" -> {
                DriverOptions.requireKnown(name, a, setOf("collection") + CREATE_COLLECTION_OPTIONS)
                crud.database(t).createCollection(a.string("collection"), createCollectionOptions(a), s)
                null
            }
            // a client operation naming its database (unified-test-format.md "dropDatabase")
            "dropDatabase" -> {
                DriverOptions.requireKnown(name, a, setOf("database"))
                t.cluster.database(a.string("database")).drop(s)
                null
            }
            "dropCollection" -> {
                DriverOptions.requireKnown(name, a, setOf("collection"))
                crud.collection(CrudTarget(t.cluster, t.database, a.string("collection"), t.options, s)).drop(s)
                null
            }
            "rename" -> {
                DriverOptions.requireKnown(name, a, setOf("to", "dropTarget"))
                crud.collection(t).renameCollection(a.string("to"), a.bool("dropTarget") ?: false, session = s)
                null
            }
            "listCollections", "listCollectionObjects" -> {
                DriverOptions.requireKnown(name, a, setOf("filter", "batchSize", "comment", "authorizedCollections", "nameOnly", "timeoutMode", "rawData"))
                val options = ListCollectionsOptions(a.bool("nameOnly"), a.bool("authorizedCollections"), a.int("batchSize"), a.optional("comment"), CursorOperations.timeoutMode(a), with(DriverOptions) { a.rawData() })
                BsonArray(crud.database(t).listCollections(a.optional("filter")?.asDocument() ?: BsonDocument(), options, s).toList())
            }
            "listCollectionNames" -> {
                DriverOptions.requireKnown(name, a, setOf("filter", "authorizedCollections"))
                BsonArray(crud.database(t).listCollectionNames(a.optional("filter")?.asDocument() ?: BsonDocument(), a.bool("authorizedCollections"), s).map { BsonString(it) })
            }
            "listDatabases", "listDatabaseObjects" -> {
                DriverOptions.requireKnown(name, a, setOf("filter", "nameOnly", "authorizedDatabases", "comment"))
                val dbs = t.cluster.listDatabases(a.optional("filter")?.asDocument() ?: BsonDocument(), a.bool("nameOnly"), a.bool("authorizedDatabases"), a.optional("comment"), s, t.options.timeoutMS)
                BsonArray(dbs.map { it.document })
            }
            "listDatabaseNames" -> {
                DriverOptions.requireKnown(name, a, setOf("filter", "authorizedDatabases"))
                BsonArray(t.cluster.listDatabaseNames(a.optional("filter")?.asDocument() ?: BsonDocument(), a.bool("authorizedDatabases"), s, t.options.timeoutMS).map { BsonString(it) })
            }
            else -> throw UnsupportedOperationException("driver management helper $name")
        }
    }

    private fun CrudOperations.Args.int(k: String): Int? = optional(k)?.asNumber()?.intValue()
    private fun CrudOperations.Args.long(k: String): Long? = optional(k)?.asNumber()?.longValue()
    private fun CrudOperations.Args.bool(k: String): Boolean? = optional(k)?.asBoolean()?.value
    private fun CrudOperations.Args.document(k: String): BsonDocument? = optional(k)?.asDocument()

    /** index-management.md `IndexOptions`, given flat among the createIndex arguments. */
    private fun indexOptions(a: CrudOperations.Args) = IndexOptions(
        name = a.optional("name")?.asString()?.value, unique = a.bool("unique"), sparse = a.bool("sparse"), expireAfterSeconds = a.long("expireAfterSeconds"),
        partialFilterExpression = a.document("partialFilterExpression"), collation = a.document("collation"), hidden = a.bool("hidden"),
        wildcardProjection = a.document("wildcardProjection"), storageEngine = a.document("storageEngine"), version = a.int("version"),
        weights = a.document("weights"), defaultLanguage = a.optional("default_language")?.asString()?.value,
        languageOverride = a.optional("language_override")?.asString()?.value, textIndexVersion = a.int("textIndexVersion"),
        sphereIndexVersion = a.int("2dsphereIndexVersion"), bits = a.int("bits"), min = a.optional("min")?.asNumber()?.doubleValue(),
        max = a.optional("max")?.asNumber()?.doubleValue(), background = a.bool("background"),
    )

    private fun createIndexOptions(a: CrudOperations.Args) = CreateIndexOptions(
        a.optional("commitQuorum")?.let { if (it.isNumber) CommitQuorum.Members(it.asNumber().intValue()) else CommitQuorum.Named(it.asString().value) },
        a.long("maxTimeMS"), a.optional("comment"), with(DriverOptions) { a.rawData() },
    )

    private fun dropIndexOptions(a: CrudOperations.Args) = DropIndexOptions(a.long("maxTimeMS"), a.optional("comment"), with(DriverOptions) { a.rawData() })

    /** A `model` of createSearchIndex(es): `{definition, name?, type?}`. */
    private fun searchIndexModel(m: BsonDocument): SearchIndexModel {
        (m.keys - setOf("definition", "name", "type")).firstOrNull()?.let { throw UnsupportedOperationException("search index model field '$it': the driver's SearchIndexModel has no such field") }
        return SearchIndexModel(m.getDocument("definition"), m.getString("name", null)?.value, m.getString("type", null)?.value)
    }

    private fun createCollectionOptions(a: CrudOperations.Args) = CreateCollectionOptions(
        capped = a.bool("capped"), size = a.long("size"), max = a.long("max"), validator = a.document("validator"),
        validationLevel = a.optional("validationLevel")?.let { v -> ValidationLevel.entries.first { it.value == v.asString().value } },
        validationAction = a.optional("validationAction")?.let { v -> ValidationAction.entries.first { it.value == v.asString().value } },
        collation = a.document("collation"), timeseries = a.document("timeseries")?.let(::timeSeries), expireAfterSeconds = a.long("expireAfterSeconds"),
        clusteredIndex = a.document("clusteredIndex")?.let(::clusteredIndex),
        changeStreamPreAndPostImages = a.document("changeStreamPreAndPostImages")?.let { d ->
            (d.keys - "enabled").firstOrNull()?.let { throw UnsupportedOperationException("changeStreamPreAndPostImages field '$it'") }
            d.getBoolean("enabled").value
        },
        storageEngine = a.document("storageEngine"), indexOptionDefaults = a.document("indexOptionDefaults"), encryptedFields = a.document("encryptedFields"),
        viewOn = a.optional("viewOn")?.asString()?.value, pipeline = a.optional("pipeline")?.asArray()?.map { it.asDocument() }, comment = a.optional("comment"),
    )

    private fun timeSeries(d: BsonDocument): TimeSeriesOptions {
        (d.keys - setOf("timeField", "metaField", "granularity", "bucketMaxSpanSeconds", "bucketRoundingSeconds")).firstOrNull()?.let {
            throw UnsupportedOperationException("timeseries field '$it': the driver's TimeSeriesOptions has no such field")
        }
        return TimeSeriesOptions(
            d.getString("timeField").value, d.getString("metaField", null)?.value,
            d.getString("granularity", null)?.value?.let { g -> TimeSeriesGranularity.entries.first { it.value == g } },
            d["bucketMaxSpanSeconds"]?.asNumber()?.longValue(), d["bucketRoundingSeconds"]?.asNumber()?.longValue(),
        )
    }

    private fun clusteredIndex(d: BsonDocument): ClusteredIndexOptions {
        (d.keys - setOf("key", "unique", "name")).firstOrNull()?.let { throw UnsupportedOperationException("clusteredIndex field '$it': the driver's ClusteredIndexOptions has no such field") }
        return ClusteredIndexOptions(d.getDocument("key"), d.getBoolean("unique").value, d.getString("name", null)?.value)
    }

    companion object {
        /** The helpers run here. */
        val OPERATIONS: Set<String> = setOf(
            "createIndex", "dropIndex", "dropIndexes", "listIndexes", "listIndexNames",
            "createSearchIndex", "createSearchIndexes", "updateSearchIndex", "dropSearchIndex", "listSearchIndexes",
            "createCollection", "dropCollection", "dropDatabase", "rename", "listCollections", "listCollectionObjects", "listCollectionNames",
            "listDatabases", "listDatabaseObjects", "listDatabaseNames",
        )

        private val INDEX_OPTIONS = setOf(
            "name", "unique", "sparse", "expireAfterSeconds", "partialFilterExpression", "collation", "hidden", "wildcardProjection", "storageEngine",
            "version", "weights", "default_language", "language_override", "textIndexVersion", "2dsphereIndexVersion", "bits", "min", "max", "background",
        )

        private val CREATE_INDEX_OPTIONS = setOf("commitQuorum", "maxTimeMS", "comment", "rawData")

        private val CREATE_COLLECTION_OPTIONS = setOf(
            "capped", "size", "max", "validator", "validationLevel", "validationAction", "collation", "timeseries", "expireAfterSeconds",
            "clusteredIndex", "changeStreamPreAndPostImages", "storageEngine", "indexOptionDefaults", "encryptedFields", "viewOn", "pipeline", "comment",
        )
    }
}
