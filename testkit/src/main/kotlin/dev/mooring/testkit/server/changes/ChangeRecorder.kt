package dev.mooring.testkit.server.changes

import java.util.UUID
import org.bson.BsonArray
import org.bson.BsonBinary
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString
import org.bson.BsonValue

/**
 * Records in [log] the change events of the writes the test kit's data engine applies, found by
 * comparing the written collection before and after each write statement: insert, update (with
 * its `updateDescription`: updated fields by dotted path, removed fields, truncated arrays),
 * replace, delete (also of findAndModify and upserts), drop and rename (which invalidate the
 * collection's streams), dropDatabase, and the expanded events create (also when an insert
 * creates the collection), createIndexes and dropIndexes. [read] returns a collection's
 * documents, [collections] a database's collection names. Used under the data engine's lock.
 */
class ChangeRecorder(
    private val log: ChangeEventLog,
    private val read: (db: String, coll: String) -> List<BsonDocument>,
    private val collections: (db: String) -> List<String>,
) {
    /** Each collection's UUID (`collectionUUID` of its events), new after a drop. */
    private val uuids = HashMap<String, BsonBinary>()

    private fun uuid(db: String, coll: String): BsonBinary = uuids.getOrPut("$db.$coll") { BsonBinary(UUID.randomUUID()) }

    private fun forget(db: String, coll: String) {
        uuids.remove("$db.$coll")
    }

    /** [log]'s append with the collection's UUID (shown with showExpandedEvents). */
    private fun event(db: String, coll: String, type: String, fields: BsonDocument = BsonDocument(), expanded: Boolean = false, invalidates: Boolean = false, before: BsonDocument? = null, after: BsonDocument? = null) =
        log.append(db, coll, type, fields.append("collectionUUID", uuid(db, coll)), expanded, invalidates, before, after)

    /** Applies the write [cmd] on [db] with [apply] (the engine's reply) and records its events. */
    fun recorded(db: String, cmd: BsonDocument, apply: () -> BsonDocument): BsonDocument {
        val name = cmd.firstKey
        if (name !in RECORDED) return apply()
        if (name == "renameCollection") return renamed(cmd, apply)
        if (name == "dropDatabase") return droppedDatabase(db, apply)
        val coll = cmd[name]?.takeIf { it.isString }?.asString()?.value ?: return apply()
        val existed = coll in collections(db)
        // an insert's event is its document; the other writes are found by comparing the collection before and after
        val before = if (name in DOCUMENT_DIFFS && name != "insert") read(db, coll) else emptyList()
        val reply = apply()
        if (!ok(reply)) return reply
        if (!existed && name != "drop" && name != "dropIndexes" && coll in collections(db)) event(db, coll, "create", expanded = true)
        when (name) {
            "drop" -> if (existed) {
                event(db, coll, "drop", invalidates = true)
                forget(db, coll)
            }
            "create" -> Unit
            "insert" -> (cmd["documents"] as? BsonArray)?.filterIsInstance<BsonDocument>()?.forEach { doc ->
                val key = doc["_id"]?.let { BsonDocument("_id", it) } ?: BsonDocument()
                event(db, coll, "insert", BsonDocument("documentKey", key).append("fullDocument", doc), after = doc)
            }
            "createIndexes" -> event(db, coll, "createIndexes", BsonDocument("operationDescription", BsonDocument("indexes", cmd["indexes"] ?: BsonArray())), expanded = true)
            "dropIndexes" -> event(db, coll, "dropIndexes", BsonDocument("operationDescription", BsonDocument("indexes", BsonArray())), expanded = true)
            else -> diff(db, coll, cmd, before, read(db, coll))
        }
        return reply
    }

    private fun renamed(cmd: BsonDocument, apply: () -> BsonDocument): BsonDocument {
        val from = cmd["renameCollection"]?.takeIf { it.isString }?.asString()?.value ?: return apply()
        val to = cmd["to"]?.takeIf { it.isString }?.asString()?.value ?: return apply()
        val (db, coll) = split(from)
        val (toDb, toColl) = split(to)
        val target = if (toColl in collections(toDb)) uuid(toDb, toColl) else null
        val reply = apply()
        if (!ok(reply)) return reply
        val toNs = BsonDocument("db", BsonString(toDb)).append("coll", BsonString(toColl))
        // the expanded description: the new namespace and the UUID of the collection it replaced (dropTarget)
        val description = BsonDocument("to", toNs).apply { target?.let { put("dropTarget", it) } }
        event(db, coll, "rename", BsonDocument("to", toNs).append("operationDescription", description), invalidates = true)
        uuids.remove("$db.$coll")?.let { uuids["$toDb.$toColl"] = it }
        return reply
    }

    private fun droppedDatabase(db: String, apply: () -> BsonDocument): BsonDocument {
        val before = collections(db)
        val reply = apply()
        if (!ok(reply)) return reply
        before.forEach {
            event(db, it, "drop", invalidates = true)
            forget(db, it)
        }
        log.append(db, null, "dropDatabase")
        return reply
    }

    /** The document events of a write to [db].[coll] that turned [before] into [after]. */
    private fun diff(db: String, coll: String, cmd: BsonDocument, before: List<BsonDocument>, after: List<BsonDocument>) {
        val old = before.associateBy { it["_id"] }
        val new = after.associateBy { it["_id"] }
        val replacement = isReplacement(cmd)
        for (doc in after) {
            val id = doc["_id"]
            val key = BsonDocument("_id", id ?: continue)
            val was = old[id]
            when {
                was == null -> event(db, coll, "insert", BsonDocument("documentKey", key).append("fullDocument", doc), after = doc)
                was == doc -> Unit
                replacement -> event(db, coll, "replace", BsonDocument("documentKey", key).append("fullDocument", doc), before = was, after = doc)
                else -> event(db, coll, "update", BsonDocument("documentKey", key).append("updateDescription", UpdateDiff.of(was, doc)), before = was, after = doc)
            }
        }
        for (doc in before) {
            val id = doc["_id"] ?: continue
            if (id !in new) event(db, coll, "delete", BsonDocument("documentKey", BsonDocument("_id", id)), before = doc)
        }
    }

    /** True when the write's update document is a replacement (no operator), as an event of type `replace`. */
    private fun isReplacement(cmd: BsonDocument): Boolean {
        val u: BsonValue? = when (cmd.firstKey) {
            "update" -> (cmd["updates"] as? BsonArray)?.firstOrNull()?.asDocument()?.get("u")
            "findAndModify" -> cmd["update"]
            else -> null
        }
        return u is BsonDocument && u.keys.none { it.startsWith("$") }
    }

    private fun ok(reply: BsonDocument): Boolean = reply["ok"]?.takeIf { it.isNumber }?.asNumber()?.doubleValue() == 1.0 &&
        (reply["writeErrors"] as? BsonArray).isNullOrEmpty()

    private fun split(ns: String): Pair<String, String> = ns.substringBefore('.') to ns.substringAfter('.')

    private companion object {
        val RECORDED = setOf("insert", "update", "delete", "findAndModify", "create", "drop", "dropDatabase", "createIndexes", "dropIndexes", "renameCollection")
        val DOCUMENT_DIFFS = setOf("insert", "update", "delete", "findAndModify")
    }
}

/**
 * An update's `updateDescription`: the changes between two versions of a document, by dotted
 * path, with `disambiguatedPaths` for the paths a dotted string cannot tell apart (a numeric or
 * dotted field name, an array index: each path's components, indexes as integers). Pure.
 */
internal object UpdateDiff {
    fun of(before: BsonDocument, after: BsonDocument): BsonDocument {
        val d = Diff()
        d.walk(emptyList(), before, after)
        val description = BsonDocument("updatedFields", d.updated).append("removedFields", d.removed).append("truncatedArrays", d.truncated)
        if (d.ambiguous.isNotEmpty()) description["disambiguatedPaths"] = d.ambiguous
        return description
    }

    private class Diff {
        val updated = BsonDocument()
        val removed = BsonArray()
        val truncated = BsonArray()
        val ambiguous = BsonDocument()

        fun walk(path: List<BsonValue>, before: BsonDocument, after: BsonDocument) {
            for ((k, v) in after) changed(path + BsonString(k), before[k], v)
            for (k in before.keys) if (k !in after) removed.add(BsonString(name(path + BsonString(k))))
        }

        private fun changed(path: List<BsonValue>, old: BsonValue?, v: BsonValue) {
            when {
                old == v -> Unit
                old is BsonDocument && v is BsonDocument -> walk(path, old, v)
                old is BsonArray && v is BsonArray && v.size <= old.size -> {
                    if (v.size < old.size) truncated.add(BsonDocument("field", BsonString(name(path))).append("newSize", BsonInt32(v.size)))
                    v.withIndex().forEach { (i, e) -> changed(path + BsonInt32(i), old[i], e) }
                }
                else -> {
                    val n = name(path)
                    updated[n] = v
                    if (path.any { it.isInt32 || it.asString().value.let { s -> '.' in s || s.all(Char::isDigit) } }) ambiguous[n] = BsonArray(path)
                }
            }
        }

        private fun name(path: List<BsonValue>): String = path.joinToString(".") { if (it.isInt32) it.asInt32().value.toString() else it.asString().value }
    }
}
