package dev.mooring.spec.unified

import dev.mooring.cmap.MongoCommandException
import dev.mooring.events.MooringException
import dev.mooring.sdam.ClientSession
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoOperationTimeoutException
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
import org.bson.BsonNull
import org.bson.BsonObjectId
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

/** A bulk write that failed part-way, as drivers report it: the [partialResult] of the batches that completed, and the [cause]. */
class BulkWriteException(val partialResult: BsonDocument, cause: Throwable) : RuntimeException("bulk write failed: $cause", cause)

/**
 * The CRUD helpers of the unified test format (unified-test-format.md, "Collection
 * Operations", "Database Operations", "Client Operations"), each mapped to the command(s) a
 * driver sends (crud.md, index-management.md, enumerate-collections.md, enumerate-databases.md)
 * and sent the way retryable-reads.md / retryable-writes.md say: retryable reads through
 * [MongoCluster.runRetryableRead], retryable writes (single-statement writes, findAndModify)
 * through [MongoCluster.runRetryableWrite], everything else (multi-document writes, index and
 * collection management, `$out`/`$merge` aggregations) through [MongoCluster.runCommand].
 * Results are shaped like a driver's (`insertedId`, `matchedCount`, the documents found, ...).
 * Stateless; one instance per test run.
 */
class CrudOperations {
    /** Runs the helper [name] with the unified-format [args] on [target]; returns its driver-shaped result (null for none). */
    suspend fun execute(name: String, entity: CrudTarget, args: JsonObject): BsonValue? {
        val a = Args(args)
        // an operation's timeoutMS overrides its entity's (client-side-operations-timeout.md)
        val target = a.optional("timeoutMS")?.let { CrudTarget(entity.cluster, entity.database, entity.collection, entity.options.copy(timeoutMS = it.asNumber().longValue())) } ?: entity
        return when (name) {
            "insertOne", "insertMany" -> insert(name, target, a)
            "updateOne", "updateMany", "replaceOne" -> update(name, target, a)
            "deleteOne", "deleteMany" -> delete(name, target, a)
            "findOneAndUpdate", "findOneAndReplace", "findOneAndDelete" -> findAndModify(name, target, a)
            "bulkWrite" -> bulkWrite(target, a)
            "find", "findOne" -> find(name, target, a)
            "aggregate" -> aggregate(target, a)
            "countDocuments" -> countDocuments(target, a)
            "estimatedDocumentCount", "count" -> count(name, target, a)
            "distinct" -> distinct(target, a)
            "createIndex" -> createIndex(target, a)
            "dropIndex", "dropIndexes" -> dropIndexes(name, target, a)
            "listIndexes", "listIndexNames" -> listIndexes(name, target, a)
            "listCollections", "listCollectionNames", "listCollectionObjects" -> listCollections(name, target, a)
            "listDatabases", "listDatabaseNames", "listDatabaseObjects" -> listDatabases(name, target, a)
            "createCollection" -> createCollection(target, a)
            "dropCollection" -> dropCollection(target, a.string("collection"))
            "drop" -> dropCollection(target, target.collection!!)
            "rename" -> rename(target, a)
            "runCommand" -> runCommand(target, a)
            "mapReduce" -> mapReduce(target, a)
            else -> throw UnsupportedOperationException("CRUD helper $name")
        }
    }

    // ---- writes -------------------------------------------------------------------------------

    private suspend fun insert(name: String, t: CrudTarget, a: Args): BsonValue {
        val given = if (name == "insertOne") listOf(a.doc("document")) else a.array("documents").map { it.asDocument() }
        if (given.isEmpty()) throw IllegalArgumentException("insertMany needs at least one document")
        // as drivers do, a document without _id gets a generated ObjectId (first)
        val docs = given.map { d -> if (d.containsKey("_id")) d else BsonDocument("_id", BsonObjectId()).also { it.putAll(d) } }
        val command = BsonDocument("insert", BsonString(t.collection!!)).append("documents", BsonArray(docs))
        command["ordered"] = a.optional("ordered") ?: BsonBoolean.TRUE // drivers send ordered: true by default
        a.copy(command, "comment", "bypassDocumentValidation")
        val reply = write(t, command, retryable = true)
        if (!acknowledged(t)) return BsonDocument("acknowledged", BsonBoolean.FALSE)
        return if (name == "insertOne") {
            BsonDocument("insertedId", docs.single()["_id"])
        } else {
            val failedAt = reply["writeErrors"]?.asArray()?.map { it.asDocument().getInt32("index").value }?.toSet() ?: emptySet()
            BsonDocument("insertedIds", BsonDocument().also { ids -> docs.forEachIndexed { i, d -> if (i !in failedAt) ids["$i"] = d["_id"] } })
        }
    }

    private suspend fun update(name: String, t: CrudTarget, a: Args): BsonValue {
        val u = a.value(if (name == "replaceOne") "replacement" else "update")
        val statement = updateStatement(name, a.doc("filter"), u, a)
        val command = BsonDocument("update", BsonString(t.collection!!)).append("ordered", BsonBoolean.TRUE).append("updates", BsonArray(listOf(statement)))
        a.copy(command, "comment", "let", "bypassDocumentValidation")
        val reply = write(t, command, retryable = name != "updateMany")
        return if (acknowledged(t)) updateResult(reply) else BsonDocument("acknowledged", BsonBoolean.FALSE)
    }

    /** One `updates` entry; the client-side checks of crud.md (an update needs operators, a replacement must have none). */
    private fun updateStatement(name: String, filter: BsonDocument, u: BsonValue, a: Args): BsonDocument {
        if (u is BsonDocument) {
            val operators = u.keys.isNotEmpty() && u.keys.first().startsWith("$")
            if (name == "replaceOne" && operators) throw IllegalArgumentException("a replacement document must not contain update operators")
            if (name != "replaceOne" && !operators) throw IllegalArgumentException("an update document must contain update operators")
        }
        val statement = BsonDocument("q", filter).append("u", u)
        if (name == "updateMany") statement["multi"] = BsonBoolean.TRUE
        a.copy(statement, "upsert", "arrayFilters", "hint", "collation")
        return statement
    }

    private fun updateResult(reply: BsonDocument): BsonDocument {
        val upserted = reply["upserted"]?.asArray()
        val n = reply.getNumber("n", BsonInt32(0)).intValue()
        val result = BsonDocument("matchedCount", BsonInt32(n - (upserted?.size ?: 0)))
            .append("modifiedCount", reply.getNumber("nModified", BsonInt32(0)))
            .append("upsertedCount", BsonInt32(upserted?.size ?: 0))
        upserted?.firstOrNull()?.let { result["upsertedId"] = it.asDocument()["_id"] }
        return result
    }

    private suspend fun delete(name: String, t: CrudTarget, a: Args): BsonValue {
        val statement = BsonDocument("q", a.doc("filter")).append("limit", BsonInt32(if (name == "deleteOne") 1 else 0))
        a.copy(statement, "hint", "collation")
        val command = BsonDocument("delete", BsonString(t.collection!!)).append("ordered", BsonBoolean.TRUE).append("deletes", BsonArray(listOf(statement)))
        a.copy(command, "comment", "let")
        val reply = write(t, command, retryable = name == "deleteOne")
        return if (acknowledged(t)) BsonDocument("deletedCount", reply.getNumber("n", BsonInt32(0))) else BsonDocument("acknowledged", BsonBoolean.FALSE)
    }

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

    private suspend fun findAndModify(name: String, t: CrudTarget, a: Args): BsonValue {
        val command = BsonDocument("findAndModify", BsonString(t.collection!!)).append("query", a.doc("filter"))
        when (name) {
            "findOneAndDelete" -> command["remove"] = BsonBoolean.TRUE
            else -> {
                val u = a.value(if (name == "findOneAndReplace") "replacement" else "update")
                updateStatement(if (name == "findOneAndReplace") "replaceOne" else "updateOne", BsonDocument(), u, Args(JsonObject(emptyMap())))
                command["update"] = u
                a.optional("returnDocument")?.let { command["new"] = BsonBoolean(it.asString().value.equals("after", ignoreCase = true)) }
                a.copy(command, "upsert", "arrayFilters", "bypassDocumentValidation")
            }
        }
        a.optional("projection")?.let { command["fields"] = it }
        a.copy(command, "sort", "hint", "collation", "comment", "let")
        val reply = write(t, command, retryable = true)
        return reply["value"] ?: BsonNull.VALUE
    }

    /**
     * `bulkWrite`: consecutive requests of one kind go in one insert/update/delete command (as
     * drivers batch them), each sent as a retryable write unless it holds a multi-document
     * statement; ordered (the default) stops at the first failing batch.
     */
    private suspend fun bulkWrite(t: CrudTarget, a: Args): BsonValue {
        val ordered = a.optional("ordered")?.asBoolean()?.value ?: true
        val requests = a.json["requests"]!!.jsonArray.map { it.jsonObject.entries.single().let { (k, v) -> k to Args(v.jsonObject) } }
        if (requests.isEmpty()) throw IllegalArgumentException("bulkWrite needs at least one request")
        val kind = { op: String -> when (op) { "insertOne" -> "insert"; "deleteOne", "deleteMany" -> "delete"; else -> "update" } }
        val batches = ArrayList<MutableList<Pair<Int, Pair<String, Args>>>>()
        requests.forEachIndexed { i, r -> if (batches.lastOrNull()?.last()?.second?.first?.let(kind) == kind(r.first)) batches.last().add(i to r) else batches.add(mutableListOf(i to r)) }
        var inserted = 0; var matched = 0; var modified = 0; var deleted = 0; var upserted = 0
        val insertedIds = BsonDocument(); val upsertedIds = BsonDocument()
        val result = {
            BsonDocument("deletedCount", BsonInt32(deleted)).append("insertedCount", BsonInt32(inserted)).append("insertedIds", insertedIds.clone())
                .append("matchedCount", BsonInt32(matched)).append("modifiedCount", BsonInt32(modified))
                .append("upsertedCount", BsonInt32(upserted)).append("upsertedIds", upsertedIds.clone())
        }
        val attempted = BsonDocument()
        // timeoutMS bounds the whole bulk write, not each batch (client-side-operations-timeout.md "Batching")
        val started = System.nanoTime()
        for (batch in batches) {
            val k = kind(batch.first().second.first)
            val statements = batch.map { (index, r) ->
                val (op, args) = r
                when (op) {
                    "insertOne" -> args.doc("document").let { d -> if (d.containsKey("_id")) d else BsonDocument("_id", BsonObjectId()).also { it.putAll(d) } }
                        .also { attempted["$index"] = it["_id"] }
                    "deleteOne", "deleteMany" -> BsonDocument("q", args.doc("filter")).append("limit", BsonInt32(if (op == "deleteOne") 1 else 0))
                        .also { args.copy(it, "hint", "collation") }
                    "replaceOne" -> updateStatement("replaceOne", args.doc("filter"), args.value("replacement"), args)
                    else -> updateStatement(op, args.doc("filter"), args.value("update"), args)
                }
            }
            val command = BsonDocument(k, BsonString(t.collection!!)).append(
                when (k) { "insert" -> "documents"; "delete" -> "deletes"; else -> "updates" }, BsonArray(statements),
            ).append("ordered", BsonBoolean(ordered))
            a.copy(command, "comment", "let", "bypassDocumentValidation")
            val multi = batch.any { it.second.first == "updateMany" || it.second.first == "deleteMany" }
            val reply = try {
                write(remainingOf(t, started), command, retryable = !multi, throwWriteErrors = false)
            } catch (e: Exception) {
                throw BulkWriteException(result(), e)
            }
            val n = reply.getNumber("n", BsonInt32(0)).intValue()
            when (k) {
                "insert" -> {
                    inserted += n
                    val failed = reply["writeErrors"]?.asArray()?.map { batch[it.asDocument().getInt32("index").value].first }?.toSet() ?: emptySet()
                    val stop = if (ordered) failed.minOrNull() ?: Int.MAX_VALUE else Int.MAX_VALUE
                    batch.forEach { (i, _) -> if (i !in failed && i < stop) insertedIds["$i"] = attempted["$i"] }
                }
                "delete" -> deleted += n
                else -> {
                    val ups = reply["upserted"]?.asArray() ?: BsonArray()
                    ups.forEach { u -> upsertedIds["${batch[u.asDocument().getInt32("index").value].first}"] = u.asDocument()["_id"] }
                    upserted += ups.size; matched += n - ups.size; modified += reply.getNumber("nModified", BsonInt32(0)).intValue()
                }
            }
            try {
                throwWriteErrors(reply)
            } catch (e: CrudWriteException) {
                throw BulkWriteException(result(), e)
            }
        }
        if (!acknowledged(t)) return BsonDocument("acknowledged", BsonBoolean.FALSE)
        return result()
    }

    /** [t] with the time left of its positive timeoutMS since [startedNanos]; a [MongoOperationTimeoutException] when none is left. */
    private fun remainingOf(t: CrudTarget, startedNanos: Long): CrudTarget {
        val limit = t.options.timeoutMS?.takeIf { it > 0 } ?: return t
        val left = limit - (System.nanoTime() - startedNanos) / 1_000_000
        if (left <= 0) throw MongoOperationTimeoutException("bulkWrite exceeded timeoutMS=$limit between its batches")
        return CrudTarget(t.cluster, t.database, t.collection, t.options.copy(timeoutMS = left))
    }

    /** Sends the write [command] with the collection's writeConcern, retryable or not; throws write and write concern errors as drivers do. */
    private suspend fun write(t: CrudTarget, command: BsonDocument, retryable: Boolean, throwWriteErrors: Boolean = true): BsonDocument {
        t.options.writeConcern?.let { if (!command.containsKey("writeConcern")) command["writeConcern"] = it }
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

    private fun acknowledged(t: CrudTarget): Boolean = t.options.writeConcern?.get("w")?.let { it.isNumber && it.asNumber().intValue() == 0 } != true

    // ---- reads --------------------------------------------------------------------------------

    private suspend fun find(name: String, t: CrudTarget, a: Args): BsonValue {
        val command = BsonDocument("find", BsonString(t.collection!!)).append("filter", a.optional("filter") ?: BsonDocument())
        a.copy(command, "sort", "projection", "skip", "hint", "collation", "comment", "let", "allowDiskUse", "min", "max", "returnKey", "showRecordId", "maxTimeMS")
        if (name == "findOne") {
            command["limit"] = BsonInt32(1)
            command["singleBatch"] = BsonBoolean.TRUE
        } else {
            a.copy(command, "limit", "batchSize")
        }
        CursorOperations.flagCursorType(command, CursorOperations.cursorType(a))
        val limit = if (name == "findOne") null else a.optional("limit")?.takeIf { it.isNumber }?.asNumber()?.intValue()
        val docs = cursor(t, command, retryable = true, a, limit)
        return if (name == "findOne") docs.firstOrNull() ?: BsonNull.VALUE else BsonArray(docs)
    }

    private suspend fun aggregate(t: CrudTarget, a: Args): BsonValue {
        val pipeline = a.array("pipeline")
        val writes = pipeline.any { s -> s.asDocument().keys.any { it == "\$out" || it == "\$merge" } }
        val command = BsonDocument("aggregate", t.collection?.let { BsonString(it) } ?: BsonInt32(1)).append("pipeline", pipeline)
            .append("cursor", a.optional("batchSize")?.let { BsonDocument("batchSize", it) } ?: BsonDocument())
        a.copy(command, "allowDiskUse", "collation", "comment", "hint", "let", "maxTimeMS", "bypassDocumentValidation")
        if (writes) t.options.writeConcern?.let { command["writeConcern"] = it }
        return BsonArray(cursor(t, command, retryable = !writes, a))
    }

    private suspend fun countDocuments(t: CrudTarget, a: Args): BsonValue {
        val pipeline = BsonArray(listOf(BsonDocument("\$match", a.doc("filter"))))
        a.optional("skip")?.let { pipeline.add(BsonDocument("\$skip", it)) }
        a.optional("limit")?.let { pipeline.add(BsonDocument("\$limit", it)) }
        pipeline.add(BsonDocument("\$group", BsonDocument("_id", BsonInt32(1)).append("n", BsonDocument("\$sum", BsonInt32(1)))))
        val command = BsonDocument("aggregate", BsonString(t.collection!!)).append("pipeline", pipeline).append("cursor", BsonDocument())
        a.copy(command, "collation", "comment", "hint", "maxTimeMS")
        return cursor(t, command, retryable = true, a).firstOrNull()?.get("n") ?: BsonInt32(0)
    }

    private suspend fun count(name: String, t: CrudTarget, a: Args): BsonValue {
        val command = BsonDocument("count", BsonString(t.collection!!))
        if (name == "count") {
            command["query"] = a.optional("filter") ?: BsonDocument()
            a.copy(command, "skip", "limit", "hint", "collation")
        }
        a.copy(command, "comment", "maxTimeMS")
        return read(t, command).getNumber("n", BsonInt32(0))
    }

    private suspend fun distinct(t: CrudTarget, a: Args): BsonValue {
        val command = BsonDocument("distinct", BsonString(t.collection!!)).append("key", BsonString(a.string("fieldName"))).append("query", a.doc("filter"))
        a.copy(command, "collation", "comment", "hint")
        return read(t, command).getArray("values")
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
        val dbs = read(CrudTarget(t.cluster, "admin", null, t.options), command).getArray("databases")
        return if (name == "listDatabaseNames") BsonArray(dbs.map { it.asDocument()["name"]!! }) else dbs
    }

    /** Sends the read [command] with the entity's readConcern and read preference, as a retryable read. */
    private suspend fun read(t: CrudTarget, command: BsonDocument): BsonDocument {
        t.options.readConcern?.let { if (!command.containsKey("readConcern")) command["readConcern"] = it }
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
        t.options.readConcern?.let { if (!command.containsKey("readConcern")) command["readConcern"] = it }
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
        t.options.readConcern?.let { command["readConcern"] = it }
        val reply = t.cluster.runCommand(t.database, command, t.options.readPreference ?: ReadPreference.PRIMARY, t.session, t.options.timeoutMS)
        return reply["results"] ?: throw UnsupportedOperationException("mapReduce without inline output")
    }

    /** `runCommand` on a database entity: the command as given (never retried), with the read preference argument. */
    private suspend fun runCommand(t: CrudTarget, a: Args): BsonValue {
        val readPreference = a.json["readPreference"]?.jsonObject?.let { UnifiedReadPreference.parse(it) } ?: ReadPreference.PRIMARY
        return t.cluster.runCommand(t.database, a.doc("command"), readPreference, t.session, t.options.timeoutMS)
    }

    /** The arguments of one operation, as BSON. */
    class Args(val json: JsonObject) {
        private val bson: BsonDocument = BsonDocument.parse(json.toString())

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

        /** The helpers [execute] runs. */
        val OPERATIONS: Set<String> = setOf(
            "insertOne", "insertMany", "updateOne", "updateMany", "replaceOne", "deleteOne", "deleteMany",
            "findOneAndUpdate", "findOneAndReplace", "findOneAndDelete", "bulkWrite", "find", "findOne", "aggregate",
            "countDocuments", "estimatedDocumentCount", "count", "distinct", "createIndex", "dropIndex", "dropIndexes",
            "listIndexes", "listIndexNames", "listCollections", "listCollectionNames", "listCollectionObjects",
            "listDatabases", "listDatabaseNames", "listDatabaseObjects", "createCollection", "dropCollection", "drop", "rename", "runCommand",
            "mapReduce",
        )

        /** The error an operation's [error] stands for: the cause of a [BulkWriteException], else [error] itself. */
        fun unwrap(error: Throwable): Throwable = if (error is BulkWriteException) error.cause!! else error

        /** The server error code of [error] (a command error or a write error), or null. */
        fun errorCode(error: Throwable): Int? = when (error) {
            is MongoCommandException -> error.code
            is CrudWriteException -> error.code
            else -> null
        }

        /** The server error code name of [error], or null. */
        fun errorCodeName(error: Throwable): String? = when (error) {
            is MongoCommandException -> error.codeName
            is CrudWriteException -> error.codeName
            else -> null
        }

        /** True when [error] carries the error [label] (a Mooring error or a write error's reply). */
        fun hasErrorLabel(error: Throwable, label: String): Boolean = when (error) {
            is MooringException -> error.hasErrorLabel(label)
            is CrudWriteException -> label in error.errorLabels
            else -> false
        }
    }
}

/** The unified format's read preference documents. */
object UnifiedReadPreference {
    /** `{mode}` (tag sets and staleness are not used by the hosted tests and fail loudly). */
    fun parse(rp: JsonObject): ReadPreference {
        if (rp.keys != setOf("mode")) throw UnsupportedOperationException("read preference $rp")
        val mode = rp["mode"]!!.jsonPrimitive.content
        return ReadPreference(dev.mooring.sdam.ReadPreferenceMode.fromValue(mode) ?: throw UnsupportedOperationException("read preference mode $mode"))
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
