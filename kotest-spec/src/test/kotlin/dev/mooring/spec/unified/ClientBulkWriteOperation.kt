package dev.mooring.spec.unified

import dev.mooring.sdam.ReadPreference
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import org.bson.BsonArray
import org.bson.BsonBoolean
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonInt64
import org.bson.BsonObjectId
import org.bson.BsonString
import org.bson.BsonValue

/**
 * The errors of a client bulk write (crud/bulk-write.md `ClientBulkWriteException`): the
 * [writeErrors] by model index (`{code, message, details?}`), the [writeConcernErrors]
 * (`{code, message, details?}`) and the [partialResult] when at least one write succeeded.
 */
class ClientBulkWriteException(val writeErrors: BsonDocument, val writeConcernErrors: BsonArray, val partialResult: BsonDocument?) :
    RuntimeException("client bulk write failed: writeErrors=${writeErrors.toJson()}, writeConcernErrors=$writeConcernErrors")

/**
 * The unified format's `clientBulkWrite` (crud/bulk-write.md, `MongoClient.bulkWrite`): the
 * `models` (insertOne, updateOne, updateMany, replaceOne, deleteOne, deleteMany, each with its
 * `namespace`) become one `bulkWrite` command on `admin` — `ops` referencing `nsInfo` (each
 * namespace once, in first-use order), `errorsOnly` (the inverse of `verboseResults`, true when
 * unset), `ordered` (true when unset), `bypassDocumentValidation`, `comment`, `let`,
 * `writeConcern` (the argument's, else the client's). It is sent as a retryable write
 * ([dev.mooring.sdam.MongoCluster.runRetryableWrite]: lsid, txnNumber, one retry) unless a model
 * is an updateMany or deleteMany, then through runCommand. The results cursor's entries (the
 * test kit answers with the whole cursor in its first batch; a cursor left open is an
 * [UnsupportedOperationException], as a getMore in the write's session and connection is not
 * possible through Mooring's API) are mapped to the summary counts and, with verboseResults, the
 * per-model insertResults/updateResults/deleteResults. Write errors and write concern errors are
 * thrown as a [ClientBulkWriteException]. Mooring sends the command as one document: more models
 * than the server's maxWriteBatchSize fail with [UnsupportedOperationException] rather than
 * being split into batches. Stateless.
 */
object ClientBulkWriteOperation {
    private val MULTI = setOf("updateMany", "deleteMany")

    suspend fun execute(t: CrudTarget, args: JsonObject): BsonValue {
        val a = CrudOperations.Args(args)
        val models = args["models"]!!.jsonArray.map { it.jsonObject.entries.single().let { (k, v) -> k to BsonDocument.parse(v.toString()) } }
        require(models.isNotEmpty()) { "clientBulkWrite needs at least one model" }
        val namespaces = models.map { it.second.getString("namespace").value }.distinct()
        val insertedIds = HashMap<Int, BsonValue>()
        val ops = models.mapIndexed { i, (kind, m) -> op(i, kind, m, namespaces.indexOf(m.getString("namespace").value), insertedIds) }
        val verbose = a.optional("verboseResults")?.asBoolean()?.value ?: false
        val command = BsonDocument("bulkWrite", BsonInt32(1)).append("errorsOnly", BsonBoolean(!verbose))
            .append("ordered", BsonBoolean(a.optional("ordered")?.asBoolean()?.value ?: true))
            .append("ops", BsonArray(ops)).append("nsInfo", BsonArray(namespaces.map { BsonDocument("ns", BsonString(it)) }))
        a.copy(command, "bypassDocumentValidation", "comment", "let", "writeConcern")
        if (!command.containsKey("writeConcern")) t.options.writeConcern?.let { command["writeConcern"] = it }
        val reply = if (models.none { it.first in MULTI }) {
            t.cluster.runRetryableWrite("admin", command, t.session, t.options.timeoutMS)
        } else {
            t.cluster.runCommand("admin", command, ReadPreference.PRIMARY, t.session, t.options.timeoutMS)
        }
        if (command["writeConcern"]?.asDocument()?.get("w")?.let { it.isNumber && it.asNumber().intValue() == 0 } == true) {
            return BsonDocument("acknowledged", BsonBoolean.FALSE)
        }
        return result(models.map { it.first }, insertedIds, reply, verbose, command.getBoolean("ordered").value)
    }

    /** The `ops` entry of model [i] of [kind] on the nsInfo entry [ns]; an insert's `_id` (generated first when missing) goes to [insertedIds]. */
    private fun op(i: Int, kind: String, m: BsonDocument, ns: Int, insertedIds: MutableMap<Int, BsonValue>): BsonDocument = when (kind) {
        "insertOne" -> {
            val given = m.getDocument("document")
            val doc = if (given.containsKey("_id")) given else BsonDocument("_id", BsonObjectId()).also { it.putAll(given) }
            insertedIds[i] = doc["_id"]!!
            BsonDocument("insert", BsonInt32(ns)).append("document", doc)
        }
        "updateOne", "updateMany", "replaceOne" -> BsonDocument("update", BsonInt32(ns)).append("filter", m.getDocument("filter"))
            .append("updateMods", if (kind == "replaceOne") m["replacement"]!! else m["update"]!!)
            .append("multi", BsonBoolean(kind == "updateMany"))
            .also { op -> for (k in listOf("upsert", "arrayFilters", "hint", "collation")) m[k]?.let { op[k] = it } }
        "deleteOne", "deleteMany" -> BsonDocument("delete", BsonInt32(ns)).append("filter", m.getDocument("filter"))
            .append("multi", BsonBoolean(kind == "deleteMany"))
            .also { op -> for (k in listOf("hint", "collation")) m[k]?.let { op[k] = it } }
        else -> throw UnsupportedOperationException("clientBulkWrite model $kind")
    }

    /** The BulkWriteResult of [reply] (or the [ClientBulkWriteException] its errors make). */
    private fun result(kinds: List<String>, insertedIds: Map<Int, BsonValue>, reply: BsonDocument, verbose: Boolean, ordered: Boolean): BsonDocument {
        val cursor = reply.getDocument("cursor")
        if (cursor.getNumber("id").longValue() != 0L) throw UnsupportedOperationException("a bulkWrite results cursor that needs getMore")
        val inserts = BsonDocument()
        val updates = BsonDocument()
        val deletes = BsonDocument()
        val writeErrors = BsonDocument()
        for (entry in cursor.getArray("firstBatch").map { it.asDocument() }) {
            val idx = entry.getNumber("idx").intValue()
            if (entry.getNumber("ok").doubleValue() != 1.0) {
                writeErrors["$idx"] = BsonDocument("code", entry["code"]).append("message", entry["errmsg"] ?: BsonString(""))
                    .also { e -> entry["errInfo"]?.let { e["details"] = it } }
                continue
            }
            when (kinds[idx]) {
                "insertOne" -> inserts["$idx"] = BsonDocument("insertedId", insertedIds.getValue(idx))
                "deleteOne", "deleteMany" -> deletes["$idx"] = BsonDocument("deletedCount", BsonInt64(entry.getNumber("n").longValue()))
                else -> {
                    val upserted = entry["upserted"]?.asDocument()?.get("_id")
                    val n = entry.getNumber("n").longValue()
                    updates["$idx"] = BsonDocument("matchedCount", BsonInt64(if (upserted != null) n - 1 else n))
                        .append("modifiedCount", BsonInt64(entry.getNumber("nModified", BsonInt32(0)).longValue()))
                        .also { u -> upserted?.let { u["upsertedId"] = it } }
                }
            }
        }
        val counts = BsonDocument("insertedCount", count(reply, "nInserted")).append("upsertedCount", count(reply, "nUpserted"))
            .append("matchedCount", count(reply, "nMatched")).append("modifiedCount", count(reply, "nModified"))
            .append("deletedCount", count(reply, "nDeleted"))
        if (verbose) counts.append("insertResults", inserts).append("updateResults", updates).append("deleteResults", deletes)
        val concernErrors = BsonArray(listOfNotNull(reply["writeConcernError"]?.asDocument()?.let { e ->
            BsonDocument("code", e["code"]).append("message", e["errmsg"] ?: BsonString("")).also { d -> e["errInfo"]?.let { d["details"] = it } }
        }))
        if (writeErrors.isEmpty() && concernErrors.isEmpty()) return counts
        // bulk-write.md: a partial result only when at least one write is known to have succeeded
        val nErrors = reply.getNumber("nErrors", BsonInt32(0)).intValue()
        val firstError = writeErrors.keys.minOfOrNull { it.toInt() }
        val succeeded = if (ordered) nErrors == 0 || (firstError != null && firstError > 0) else nErrors < kinds.size
        throw ClientBulkWriteException(writeErrors, concernErrors, counts.takeIf { succeeded })
    }

    private fun count(reply: BsonDocument, field: String): BsonInt64 = BsonInt64(reply.getNumber(field, BsonInt32(0)).longValue())
}
