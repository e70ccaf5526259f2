package dev.mooring.spec.unified

import dev.mooring.driver.database
import dev.mooring.cmap.MongoCommandException
import dev.mooring.events.MooringException
import dev.mooring.sdam.ClientSession
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.ReadPreference
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.bson.BsonArray
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
 * Operations", "Database Operations", "Client Operations"), run through the public driver API:
 * the collection CRUD helpers by [DriverCrud] (reads, writes, findOneAndX, bulkWrite, drop), index,
 * search index and collection management, the listings and the database-level aggregate by
 * [DriverManagement]. Three helpers no specification Mooring implements gives a driver API send
 * the command a driver would, marked `STAND-IN` below: the deprecated `count` (crud.md: "should
 * not be implemented in new drivers"), `mapReduce`, and the runner's `modifyCollection` (`collMod`);
 * plus the database `runCommand` operation (run-command.md's own command path).
 * Stateless; one instance per test run.
 */
class CrudOperations {
    private val driver = DriverCrud()
    private val management = DriverManagement(driver)

    /** Runs the helper [name] with the unified-format [args] on [target]; returns its driver-shaped result (null for none). */
    suspend fun execute(name: String, entity: CrudTarget, args: JsonObject): BsonValue? {
        val a = Args(args)
        // an operation's timeoutMS overrides its entity's (client-side-operations-timeout.md)
        val target = a.optional("timeoutMS")?.let { CrudTarget(entity.cluster, entity.database, entity.collection, entity.options.copy(timeoutMS = it.asNumber().longValue()), entity.session) } ?: entity
        if (name in DriverCrud.OPERATIONS && target.collection != null) return driver.execute(name, target, a)
        if (name in DriverManagement.OPERATIONS || name == "aggregate") return management.execute(name, target, a)
        return when (name) {
            // STAND-IN: crud.md's count is "DEPRECATED and should not be implemented in new drivers": the runner sends the command
            "count" -> count(name, target, a)
            // STAND-IN: the unified format's modifyCollection (collMod) is a test-runner operation no driver specification defines
            "modifyCollection" -> modifyCollection(target, a)
            "runCommand" -> runCommand(target, a)
            // STAND-IN: mapReduce is deprecated and in no driver specification Mooring implements
            "mapReduce" -> mapReduce(target, a)
            else -> throw UnsupportedOperationException("CRUD helper $name on ${if (target.collection == null) "a database or client" else "a collection"} entity")
        }
    }

    // ---- writes -------------------------------------------------------------------------------

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

    private suspend fun count(name: String, t: CrudTarget, a: Args): BsonValue {
        val command = BsonDocument("count", BsonString(t.collection!!))
        command["query"] = a.optional("filter") ?: BsonDocument()
        a.copy(command, "skip", "limit", "hint", "collation", "comment", "maxTimeMS", "rawData")
        return read(t, command).getNumber("n", BsonInt32(0))
    }

    /** Sends the read [command] with the entity's readConcern and read preference, as a retryable read. */
    private suspend fun read(t: CrudTarget, command: BsonDocument): BsonDocument {
        t.options.readConcern?.takeIf { it.isNotEmpty() }?.let { if (!command.containsKey("readConcern")) command["readConcern"] = it }
        return t.cluster.runRetryableRead(t.database, command, t.options.readPreference ?: ReadPreference.PRIMARY, t.session, t.options.timeoutMS)
    }

    // ---- management ---------------------------------------------------------------------------

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
        /** The options modifyCollection sends as fields of the `collMod` command. */
        private val MODIFY_COLLECTION_ARGUMENTS = setOf(
            "validator", "validationLevel", "validationAction", "index", "changeStreamPreAndPostImages", "expireAfterSeconds",
            "timeseries", "viewOn", "pipeline", "comment",
        )

        /** The helpers [execute] runs. */
        val OPERATIONS: Set<String> = setOf(
            "insertOne", "insertMany", "updateOne", "updateMany", "replaceOne", "deleteOne", "deleteMany",
            "findOneAndUpdate", "findOneAndReplace", "findOneAndDelete", "bulkWrite", "find", "findOne", "aggregate",
            "countDocuments", "estimatedDocumentCount", "count", "distinct", "modifyCollection", "drop", "runCommand", "mapReduce",
        ) + DriverManagement.OPERATIONS

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
