package dev.mooring.testkit.server

import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonInt64
import org.bson.BsonString
import org.bson.BsonValue

/**
 * The `bulkWrite` admin command of MongoDB 8.0 (wire version 25), as crud/bulk-write.md
 * describes the server's side: `ops` (`{insert: nsIndex, document}`, `{update: nsIndex, filter,
 * updateMods, multi?, upsert?, arrayFilters?, sort?}`, `{delete: nsIndex, filter, multi?}`) on the
 * namespaces of `nsInfo` (`{ns: "db.coll"}`), `ordered` (default true: stop at the first error),
 * `errorsOnly` (default false: the results cursor holds only the errors). Each operation runs as
 * the one-statement insert, update or delete [single] answers; with `lsid` and `txnNumber` each
 * is recorded as a statement of the retryable write ([RetryableWriteHistory]), so a retry does
 * not apply it twice. The reply: `{cursor: {id: 0, firstBatch: [{ok, idx, n, nModified?,
 * upserted?} | {ok: 0, idx, code, errmsg, errInfo?}], ns: "admin.$cmd.bulkWrite"}, nErrors,
 * nInserted, nUpserted, nMatched, nModified, nDeleted, ok: 1}`. Called under the lock of its
 * [InMemoryCollections]; stateless itself.
 */
internal object ClientBulkWriteCommand {
    const val NAME = "bulkWrite"

    /** MongoDB 8.0, which introduced the command. */
    const val WIRE_VERSION = 25

    fun execute(
        db: String,
        cmd: BsonDocument,
        history: RetryableWriteHistory,
        failPoint: TransactionalWriteFailPoint?,
        single: (String, BsonDocument) -> BsonDocument,
    ): BsonDocument {
        if (db != "admin") return WireServer.error(13, "Unauthorized", "bulkWrite may only be run against the admin database.")
        val ops = cmd["ops"] as? BsonArray ?: return WireServer.error(40414, "Location40414", "BSON field 'bulkWrite.ops' is missing but a required field")
        val nsInfo = (cmd["nsInfo"] as? BsonArray ?: return WireServer.error(40414, "Location40414", "BSON field 'bulkWrite.nsInfo' is missing but a required field"))
            .map { (it as? BsonDocument)?.get("ns")?.takeIf { ns -> ns.isString }?.asString()?.value ?: return WireServer.error(14, "TypeMismatch", "nsInfo entries need ns") }
        val ordered = cmd["ordered"]?.let { it.isBoolean && !it.asBoolean().value } != true
        val errorsOnly = cmd["errorsOnly"]?.let { it.isBoolean && it.asBoolean().value } == true
        val retryable = RetryableWriteLabels.isRetryableWrite(cmd) && cmd.containsKey("lsid")
        val counts = Counts()
        val results = BsonArray()
        for ((i, op) in ops.withIndex()) {
            val statement = (op as? BsonDocument)?.let { translate(it, nsInfo) }
                ?: return WireServer.error(14, "TypeMismatch", "bulkWrite op $i is not an insert, update or delete on an nsInfo index")
            val (kind, ns, one) = statement
            val run = { single(ns.substringBefore('.'), one.append(kind, BsonString(ns.substringAfter('.'))).let { reorder(it, kind) }) }
            val reply = if (retryable) {
                history.statement((cmd["lsid"] as? BsonDocument)?.get("id") ?: cmd["lsid"]!!, cmd["txnNumber"]!!.asNumber().longValue(), i, failPoint, run)
            } else {
                run()
            }
            val result = counts.record(i, kind, reply)
            if (result.getNumber("ok").intValue() == 0 || !errorsOnly) results.add(result)
            if (ordered && result.getNumber("ok").intValue() == 0) break
        }
        return BsonDocument("cursor", BsonDocument("id", BsonInt64(0)).append("firstBatch", results).append("ns", BsonString("admin.\$cmd.bulkWrite")))
            .append("nErrors", BsonInt32(counts.errors)).append("nInserted", BsonInt32(counts.inserted))
            .append("nUpserted", BsonInt32(counts.upserted)).append("nMatched", BsonInt32(counts.matched))
            .append("nModified", BsonInt32(counts.modified)).append("nDeleted", BsonInt32(counts.deleted))
            .append("ok", BsonInt32(1))
    }

    /** The command name, namespace and one-statement body (without its first key yet) of [op], or null when malformed. */
    private fun translate(op: BsonDocument, nsInfo: List<String>): Triple<String, String, BsonDocument>? {
        val kind = op.firstKey
        val ns = op[kind]?.takeIf { it.isNumber }?.asNumber()?.intValue()?.let { nsInfo.getOrNull(it) } ?: return null
        val multi = op["multi"]?.let { it.isBoolean && it.asBoolean().value } == true
        val filter = op["filter"] as? BsonDocument ?: BsonDocument()
        return when (kind) {
            "insert" -> Triple("insert", ns, BsonDocument("documents", BsonArray(listOf(op["document"] as? BsonDocument ?: return null))))
            "update" -> {
                val statement = BsonDocument("q", filter).append("u", op["updateMods"] ?: return null).append("multi", org.bson.BsonBoolean(multi))
                for (k in listOf("upsert", "arrayFilters", "hint", "collation", "sort")) op[k]?.let { statement[k] = it }
                Triple("update", ns, BsonDocument("updates", BsonArray(listOf(statement))))
            }
            "delete" -> Triple("delete", ns, BsonDocument("deletes", BsonArray(listOf(BsonDocument("q", filter).append("limit", BsonInt32(if (multi) 0 else 1))))))
            else -> null
        }
    }

    /** [body] with the command name [kind] first, as the data commands expect. */
    private fun reorder(body: BsonDocument, kind: String): BsonDocument =
        BsonDocument(kind, body[kind]).apply { body.forEach { (k, v) -> if (k != kind) put(k, v) } }

    /** The summary counters of one bulkWrite. */
    private class Counts {
        var errors = 0
        var inserted = 0
        var upserted = 0
        var matched = 0
        var modified = 0
        var deleted = 0

        /** Counts the [reply] of op [idx] (a [kind] statement) and returns its results-cursor entry. */
        fun record(idx: Int, kind: String, reply: BsonDocument): BsonDocument {
            val ok = reply["ok"]?.takeIf { it.isNumber }?.asNumber()?.doubleValue() == 1.0
            val error = if (!ok) reply else (reply["writeErrors"] as? BsonArray)?.firstOrNull()?.asDocument()
            if (error != null) {
                errors++
                val entry = BsonDocument("ok", BsonInt32(0)).append("idx", BsonInt32(idx))
                    .append("code", error["code"] ?: BsonInt32(8)).append("errmsg", error["errmsg"] ?: BsonString("write failed"))
                error["errInfo"]?.let { entry["errInfo"] = it }
                return entry
            }
            val n = reply.getNumber("n", BsonInt32(0)).intValue()
            val entry = BsonDocument("ok", BsonInt32(1)).append("idx", BsonInt32(idx)).append("n", BsonInt32(n))
            when (kind) {
                "insert" -> inserted += n
                "delete" -> deleted += n
                "update" -> {
                    val up: BsonValue? = (reply["upserted"] as? BsonArray)?.firstOrNull()?.asDocument()?.get("_id")
                    val nModified = reply.getNumber("nModified", BsonInt32(0)).intValue()
                    modified += nModified
                    entry["nModified"] = BsonInt32(nModified)
                    if (up != null) {
                        upserted++
                        matched += n - 1
                        entry["upserted"] = BsonDocument("_id", up)
                    } else {
                        matched += n
                    }
                }
            }
            return entry
        }
    }
}
