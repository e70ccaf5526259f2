package dev.mooring.spec.unified

import dev.mooring.driver.database
import dev.mooring.cmap.MongoCommandException
import dev.mooring.events.MooringException
import dev.mooring.sdam.ClientSession
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.ReadPreference
import dev.mooring.sdam.RunCursorCommandOptions
import dev.mooring.sdam.internal.cursor.CursorPage
import kotlinx.coroutines.flow.toList
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.bson.BsonArray
import org.bson.BsonBoolean
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString
import org.bson.BsonValue

/**
 * The options a CRUD helper inherits from its client, database and collection entities
 * (unified-test-format.md: `databaseOptions`, `collectionOptions`), the nearest one winning.
 */
data class EntityOptions(
    val readConcern: BsonDocument? = null,
    val writeConcern: BsonDocument? = null,
    val readPreference: ReadPreference? = null,
    /** The entity's `timeoutMS` (null: inherited; the client's is in its connection string). */
    val timeoutMS: Long? = null,
) {
    /** These options overridden by the ones [nearer] sets. */
    fun overriddenBy(nearer: EntityOptions) = EntityOptions(
        nearer.readConcern ?: readConcern,
        nearer.writeConcern ?: writeConcern,
        nearer.readPreference ?: readPreference,
        nearer.timeoutMS ?: timeoutMS,
    )
}

/**
 * Where a CRUD helper runs: the client's [cluster], the [database] and (for collection
 * helpers) the [collection], with the entity [options] in force, in the explicit [session] when the operation names one.
 */
class CrudTarget(val cluster: MongoCluster, val database: String, val collection: String?, val options: EntityOptions, val session: ClientSession? = null)

/**
 * A write that the server refused in its reply (`writeErrors` or `writeConcernError` in an
 * `ok: 1` reply), thrown as drivers throw their write exceptions: [code] and [codeName] are the
 * first write error's (or the write concern error's), [errorLabels] the reply's.
 */
class CrudWriteException(val reply: BsonDocument, val code: Int, val codeName: String?, message: String, val errorLabels: List<String>) :
    RuntimeException(message)


/**
 * The CRUD helpers of the unified test format (unified-test-format.md, "Collection
 * Operations", "Database Operations", "Client Operations"). The collection CRUD helpers
 * ([DriverCrud.OPERATIONS]: reads, writes, findOneAndX, bulkWrite, drop) run through the public
 * driver API ([DriverCrud]). The rest still send the command a driver sends, marked
 * `DRIVER-PENDING` below: index and collection management (createIndex, dropIndex(es),
 * listIndexes, createCollection, dropCollection, listCollections, rename, listDatabases, being
 * added to the driver by issue 30's index/collection work), and the helpers the driver has no
 * API for — a database-level `aggregate` (no `MongoDatabase.aggregate`), the deprecated `count`
 * and `mapReduce` — plus the database `runCommand` operation (run-command.md's own command path).
 * Stateless; one instance per test run.
 */
class CrudOperations {
    private val driver = DriverCrud()

    /** Runs the helper [name] with the unified-format [args] on [target]; returns its driver-shaped result (null for none). */
    suspend fun execute(name: String, entity: CrudTarget, args: JsonObject): BsonValue? {
        val a = Args(args)
        // an operation's timeoutMS overrides its entity's (client-side-operations-timeout.md)
        val target = a.optional("timeoutMS")?.let { CrudTarget(entity.cluster, entity.database, entity.collection, entity.options.copy(timeoutMS = it.asNumber().longValue()), entity.session) } ?: entity
        if (name in DriverCrud.OPERATIONS && target.collection != null) return driver.execute(name, target, a)
        return when (name) {
            // DRIVER-PENDING: the driver has no database-level aggregate
            "aggregate" -> aggregate(target, a)
            // DRIVER-PENDING: the deprecated count helper is not in the driver
            "count" -> count(name, target, a)
            // DRIVER-PENDING: index and collection management (another issue-30 helper adds them to the driver)
            "createIndex" -> createIndex(target, a)
            "dropIndex", "dropIndexes" -> dropIndexes(name, target, a)
            "listIndexes", "listIndexNames" -> listIndexes(name, target, a)
            "listCollections", "listCollectionNames", "listCollectionObjects" -> listCollections(name, target, a)
            "listDatabases", "listDatabaseNames", "listDatabaseObjects" -> listDatabases(name, target, a)
            "createCollection" -> createCollection(target, a)
            "modifyCollection" -> modifyCollection(target, a)
            "dropCollection" -> dropCollection(target, a.string("collection"))
            // a client operation naming the database (unified-test-format.md "dropDatabase")
            "dropDatabase" -> { target.cluster.database(a.string("database")).drop(target.session); null }
            "rename" -> rename(target, a)
            "runCommand" -> runCommand(target, a)
            // DRIVER-PENDING: mapReduce (deprecated) is not in the driver
            "mapReduce" -> mapReduce(target, a)
            else -> throw UnsupportedOperationException("CRUD helper $name on ${if (target.collection == null) "a database or client" else "a collection"} entity")
        }
    }

    // ---- writes -------------------------------------------------------------------------------

    /**
     * `createCollection` (the `create` command with the collection options crud.md's createCollection
     * passes through: capped collections, validators, time series, views, ...). An argument
     * outside that list fails the operation rather than being dropped.
     */
    private suspend fun createCollection(t: CrudTarget, a: Args): BsonValue? {
        (a.json.keys - CREATE_COLLECTION_ARGUMENTS - setOf("collection", "session", "timeoutMS")).firstOrNull()?.let {
            throw UnsupportedOperationException("createCollection argument $it")
        }
        val command = BsonDocument("create", BsonString(a.string("collection")))
        a.copy(command, *CREATE_COLLECTION_ARGUMENTS.toTypedArray())
        write(t, command, retryable = false)
        return null
    }

    /**
     * `modifyCollection` (the `collMod` command with the collection options it changes). An argument
     * outside that list fails the operation rather than being dropped.
     */
    private suspend fun modifyCollection(t: CrudTarget, a: Args): BsonValue? {
        (a.json.keys - MODIFY_COLLECTION_ARGUMENTS - setOf("collection", "session", "timeoutMS")).firstOrNull()?.let {
            throw UnsupportedOperationException("modifyCollection argument $it")
        }
        val command = BsonDocument("collMod", BsonString(a.string("collection")))
        a.copy(command, *MODIFY_COLLECTION_ARGUMENTS.toTypedArray())
        write(t, command, retryable = false)
        return null
    }

    /** Sends the write [command] with the collection's writeConcern, retryable or not; throws write and write concern errors as drivers do. */
    private suspend fun write(t: CrudTarget, command: BsonDocument, retryable: Boolean, throwWriteErrors: Boolean = true): BsonDocument {
        t.options.writeConcern?.takeIf { it.isNotEmpty() }?.let { if (!command.containsKey("writeConcern")) command["writeConcern"] = it }
        val reply = if (retryable) {
            t.cluster.runRetryableWrite(t.database, command, t.session, t.options.timeoutMS)
        } else {
            t.cluster.runCommand(t.database, command, ReadPreference.PRIMARY, t.session, t.options.timeoutMS)
        }
        if (throwWriteErrors) throwWriteErrors(reply)
        return reply
    }

    private fun throwWriteErrors(reply: BsonDocument) {
        val labels = reply["errorLabels"]?.asArray()?.map { it.asString().value } ?: emptyList()
        reply["writeErrors"]?.asArray()?.firstOrNull()?.asDocument()?.let { e ->
            val code = e.getNumber("code", BsonInt32(0)).intValue()
            throw CrudWriteException(reply, code, e.getString("codeName", null)?.value, "write error $code: ${e.getString("errmsg", BsonString("")).value}", labels)
        }
        reply["writeConcernError"]?.asDocument()?.let { e ->
            val code = e.getNumber("code", BsonInt32(0)).intValue()
            throw CrudWriteException(reply, code, e.getString("codeName", null)?.value, "write concern error $code: ${e.getString("errmsg", BsonString("")).value}", labels)
        }
    }

    private suspend fun aggregate(t: CrudTarget, a: Args): BsonValue {
        val pipeline = a.array("pipeline")
        val writes = pipeline.any { s -> s.asDocument().keys.any { it == "\$out" || it == "\$merge" } }
        val command = BsonDocument("aggregate", t.collection?.let { BsonString(it) } ?: BsonInt32(1)).append("pipeline", pipeline)
            .append("cursor", a.optional("batchSize")?.let { BsonDocument("batchSize", it) } ?: BsonDocument())
        a.copy(command, "allowDiskUse", "collation", "comment", "hint", "let", "maxTimeMS", "bypassDocumentValidation")
        if (writes) t.options.writeConcern?.takeIf { it.isNotEmpty() }?.let { command["writeConcern"] = it }
        return BsonArray(cursor(t, command, retryable = !writes, a))
    }

    private suspend fun count(name: String, t: CrudTarget, a: Args): BsonValue {
        val command = BsonDocument("count", BsonString(t.collection!!))
        command["query"] = a.optional("filter") ?: BsonDocument()
        a.copy(command, "skip", "limit", "hint", "collation", "comment", "maxTimeMS")
        return read(t, command).getNumber("n", BsonInt32(0))
    }

    private suspend fun listIndexes(name: String, t: CrudTarget, a: Args): BsonValue {
        val command = BsonDocument("listIndexes", BsonString(t.collection!!)).append("cursor", a.optional("batchSize")?.let { BsonDocument("batchSize", it) } ?: BsonDocument())
        a.copy(command, "comment")
        val docs = cursor(t, command, retryable = true, a)
        return BsonArray(if (name == "listIndexNames") docs.map { it["name"]!! } else docs)
    }

    private suspend fun listCollections(name: String, t: CrudTarget, a: Args): BsonValue {
        val command = BsonDocument("listCollections", BsonInt32(1)).append("cursor", a.optional("batchSize")?.let { BsonDocument("batchSize", it) } ?: BsonDocument())
        a.copy(command, "filter", "comment", "authorizedCollections")
        if (name == "listCollectionNames") command["nameOnly"] = BsonBoolean.TRUE
        val docs = cursor(t, command, retryable = true, a)
        return BsonArray(if (name == "listCollectionNames") docs.map { it["name"]!! } else docs)
    }

    private suspend fun listDatabases(name: String, t: CrudTarget, a: Args): BsonValue {
        val command = BsonDocument("listDatabases", BsonInt32(1))
        a.copy(command, "filter", "authorizedDatabases", "comment")
        if (name == "listDatabaseNames") command["nameOnly"] = BsonBoolean.TRUE
        val dbs = read(CrudTarget(t.cluster, "admin", null, t.options, t.session), command).getArray("databases")
        return if (name == "listDatabaseNames") BsonArray(dbs.map { it.asDocument()["name"]!! }) else dbs
    }

    /** Sends the read [command] with the entity's readConcern and read preference, as a retryable read. */
    private suspend fun read(t: CrudTarget, command: BsonDocument): BsonDocument {
        t.options.readConcern?.takeIf { it.isNotEmpty() }?.let { if (!command.containsKey("readConcern")) command["readConcern"] = it }
        return t.cluster.runRetryableRead(t.database, command, t.options.readPreference ?: ReadPreference.PRIMARY, t.session, t.options.timeoutMS)
    }

    /**
     * Runs the cursor-returning [command] through [MongoCluster.runCursorCommand]'s batches
     * (getMores on the cursor's server or pinned connection, with the command's batch size) and
     * returns every document; the initial command is a retryable read when [retryable]. The
     * `timeoutMode`, `cursorType` and `maxAwaitTimeMS` arguments of [a] go to the options as given;
     * a find's [limit] bounds its getMores' batch sizes (crud.md).
     */
    private suspend fun cursor(t: CrudTarget, command: BsonDocument, retryable: Boolean, a: Args, limit: Int? = null): List<BsonDocument> {
        val readPreference = if (retryable) t.options.readPreference ?: ReadPreference.PRIMARY else ReadPreference.PRIMARY
        t.options.readConcern?.takeIf { it.isNotEmpty() }?.let { if (!command.containsKey("readConcern")) command["readConcern"] = it }
        val batchSize = ((command["cursor"] as? BsonDocument)?.get("batchSize") ?: command["batchSize"])
            ?.takeIf { it.isNumber }?.asNumber()?.intValue()?.takeIf { it > 0 }
        val options = RunCursorCommandOptions(
            readPreference = readPreference, batchSize = batchSize, session = t.session, timeoutMS = t.options.timeoutMS,
            timeoutMode = CursorOperations.timeoutMode(a), cursorType = CursorOperations.cursorType(a), maxTimeMS = a.optional("maxAwaitTimeMS")?.asNumber()?.longValue(),
        )
        return CursorPage.pages(t.cluster, t.database, command, options, retryableRead = retryable, limit = limit).toList().flatMap { it.documents }
    }

    // ---- management ---------------------------------------------------------------------------

    private suspend fun createIndex(t: CrudTarget, a: Args): BsonValue {
        val keys = a.doc("keys")
        val name = a.optional("name")?.asString()?.value ?: keys.entries.joinToString("_") { (k, v) -> "${k}_${if (v.isNumber) v.asNumber().intValue() else v}" }
        val index = BsonDocument("key", keys).append("name", BsonString(name))
        a.copy(index, "unique", "sparse", "expireAfterSeconds", "partialFilterExpression")
        val command = BsonDocument("createIndexes", BsonString(t.collection!!)).append("indexes", BsonArray(listOf(index)))
        a.copy(command, "commitQuorum", "comment", "maxTimeMS")
        write(t, command, retryable = false)
        return BsonString(name)
    }

    private suspend fun dropIndexes(name: String, t: CrudTarget, a: Args): BsonValue? {
        val command = BsonDocument("dropIndexes", BsonString(t.collection!!))
            .append("index", if (name == "dropIndex") BsonString(a.string("name")) else BsonString("*"))
        a.copy(command, "comment", "maxTimeMS")
        write(t, command, retryable = false)
        return null
    }

    private suspend fun dropCollection(t: CrudTarget, collection: String): BsonValue? {
        try {
            write(t, BsonDocument("drop", BsonString(collection)), retryable = false)
        } catch (e: MongoCommandException) {
            if (e.code != NAMESPACE_NOT_FOUND) throw e // drivers ignore dropping a missing collection
        }
        return null
    }

    private suspend fun rename(t: CrudTarget, a: Args): BsonValue? {
        val command = BsonDocument("renameCollection", BsonString("${t.database}.${t.collection!!}"))
            .append("to", BsonString("${t.database}.${a.string("to")}"))
        a.copy(command, "dropTarget")
        write(CrudTarget(t.cluster, "admin", null, t.options), command, retryable = false)
        return null
    }

    /**
     * `mapReduce` (crud.md, deprecated): the command with map, reduce, out and the optional
     * query, sort, limit, finalize, scope, through runCommand: retryable-reads.md excludes it from
     * retryable reads. Returns the inline `results`.
     */
    private suspend fun mapReduce(t: CrudTarget, a: Args): BsonValue {
        val command = BsonDocument("mapReduce", BsonString(t.collection!!)).append("map", a.value("map")).append("reduce", a.value("reduce"))
            .append("out", a.value("out"))
        a.copy(command, "query", "sort", "limit", "finalize", "scope", "verbose", "collation", "comment")
        t.options.readConcern?.takeIf { it.isNotEmpty() }?.let { command["readConcern"] = it }
        val reply = t.cluster.runCommand(t.database, command, t.options.readPreference ?: ReadPreference.PRIMARY, t.session, t.options.timeoutMS)
        return reply["results"] ?: throw UnsupportedOperationException("mapReduce without inline output")
    }

    /** `runCommand` on a database entity: the command as given (never retried), with the read preference argument. */
    private suspend fun runCommand(t: CrudTarget, a: Args): BsonValue {
        val readPreference = a.json["readPreference"]?.jsonObject?.let { UnifiedReadPreference.parse(it) } ?: ReadPreference.PRIMARY
        return t.cluster.runCommand(t.database, a.doc("command"), readPreference, t.session, t.options.timeoutMS)
    }

    /** The arguments of one operation, as BSON. */
    class Args(val json: JsonObject, private val bson: BsonDocument = BsonDocument.parse(json.toString())) {
        companion object {
            /** The arguments [d] (a nested document of the operation, e.g. a bulkWrite request). */
            fun of(d: BsonDocument) = Args(kotlinx.serialization.json.Json.parseToJsonElement(d.toJson()).jsonObject, d)
        }

        fun optional(key: String): BsonValue? = bson[key]
        fun value(key: String): BsonValue = bson[key] ?: throw IllegalArgumentException("missing argument $key")
        fun doc(key: String): BsonDocument = value(key).asDocument()
        fun array(key: String): BsonArray = value(key).asArray()
        fun string(key: String): String = value(key).asString().value

        /** Copies the [keys] that are present to [into]. */
        fun copy(into: BsonDocument, vararg keys: String) {
            for (k in keys) bson[k]?.let { into[k] = it }
        }
    }

    companion object {
        private const val NAMESPACE_NOT_FOUND = 26

        /** The options createCollection sends as fields of the `create` command. */
        private val CREATE_COLLECTION_ARGUMENTS = setOf(
            "capped", "size", "max", "validator", "validationLevel", "validationAction", "timeseries", "expireAfterSeconds",
            "clusteredIndex", "changeStreamPreAndPostImages", "viewOn", "pipeline", "collation", "storageEngine", "indexOptionDefaults", "comment",
        )

        /** The options modifyCollection sends as fields of the `collMod` command. */
        private val MODIFY_COLLECTION_ARGUMENTS = setOf(
            "validator", "validationLevel", "validationAction", "index", "changeStreamPreAndPostImages", "expireAfterSeconds",
            "timeseries", "viewOn", "pipeline", "comment",
        )

        /** The helpers [execute] runs. */
        val OPERATIONS: Set<String> = setOf(
            "insertOne", "insertMany", "updateOne", "updateMany", "replaceOne", "deleteOne", "deleteMany",
            "findOneAndUpdate", "findOneAndReplace", "findOneAndDelete", "bulkWrite", "find", "findOne", "aggregate",
            "countDocuments", "estimatedDocumentCount", "count", "distinct", "createIndex", "dropIndex", "dropIndexes",
            "listIndexes", "listIndexNames", "listCollections", "listCollectionNames", "listCollectionObjects",
            "listDatabases", "listDatabaseNames", "listDatabaseObjects", "createCollection", "modifyCollection", "dropCollection", "dropDatabase", "drop", "rename", "runCommand",
            "mapReduce",
        )

        /** The server error code of [error] (a command error, a driver write exception, a management command's write error), or null. */
        fun errorCode(error: Throwable): Int? = when (error) {
            is MongoCommandException -> error.code
            is CrudWriteException -> error.code
            else -> DriverResults.errorCode(error)
        }

        /** The server error code name of [error], or null. */
        fun errorCodeName(error: Throwable): String? = when (error) {
            is MongoCommandException -> error.codeName
            is CrudWriteException -> error.codeName
            else -> DriverResults.errorCodeName(error)
        }

        /** True when [error] carries the error [label] (a Mooring error or a write error's reply). */
        fun hasErrorLabel(error: Throwable, label: String): Boolean = when (error) {
            is MooringException -> error.hasErrorLabel(label)
            is CrudWriteException -> label in error.errorLabels
            else -> false
        }
    }
}

/** The unified format's read preference documents (server-selection.md's read preference: mode, tagSets, maxStalenessSeconds, hedge). */
object UnifiedReadPreference {
    /** `{mode, tagSets?, maxStalenessSeconds?, hedge?}`; another field fails loudly. */
    fun parse(rp: JsonObject): ReadPreference {
        (rp.keys - setOf("mode", "tagSets", "maxStalenessSeconds", "hedge")).firstOrNull()?.let { throw UnsupportedOperationException("read preference field $it in $rp") }
        val mode = rp["mode"]?.jsonPrimitive?.content ?: throw UnsupportedOperationException("read preference without mode: $rp")
        val tagSets = rp["tagSets"]?.let { ts -> ts.jsonArray.map { set -> set.jsonObject.mapValues { it.value.jsonPrimitive.content } } } ?: emptyList()
        return ReadPreference(
            dev.mooring.sdam.ReadPreferenceMode.fromValue(mode) ?: throw UnsupportedOperationException("read preference mode $mode"),
            tagSets,
            rp["maxStalenessSeconds"]?.jsonPrimitive?.content?.toLong(),
            rp["hedge"]?.jsonObject?.get("enabled")?.jsonPrimitive?.content?.toBooleanStrictOrNull(),
        )
    }
}

private val ENTITY_OPTION_FIELDS = setOf("readConcern", "writeConcern", "readPreference", "timeoutMS")

/** The `readConcern`/`writeConcern`/`readPreference`/`timeoutMS` of a `databaseOptions` or `collectionOptions` object (another field fails). */
fun entityOptions(o: JsonObject?): EntityOptions = EntityOptions(
    o?.also { (it.keys - ENTITY_OPTION_FIELDS).firstOrNull()?.let { k -> throw UnsupportedOperationException("entity option $k") } }?.get("readConcern")?.let { BsonDocument.parse(it.toString()) },
    o?.get("writeConcern")?.let { BsonDocument.parse(it.toString()) },
    o?.get("readPreference")?.jsonObject?.let { UnifiedReadPreference.parse(it) },
    o?.get("timeoutMS")?.jsonPrimitive?.content?.toLong(),
)
