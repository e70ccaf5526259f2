package dev.mooring.testkit.server

import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonInt64
import org.bson.BsonString

/**
 * The cursor-returning reads of [InMemoryCollections] besides `find`: `aggregate` (pipelines of
 * `$match`, `$skip` and `$limit`; any other stage is a BadValue, as a server without that stage
 * would answer), `listCollections` (the collections of a database, filter on `name` only) and
 * `listIndexes` (the `_id_` index of an existing collection, else NamespaceNotFound 26).
 * Each answers with every result in `cursor.firstBatch` and cursor id 0; [ServerCursors] splits
 * the answer into batches. Pure functions of the collections' contents.
 */
internal object CursorQueries {
    fun aggregate(collections: InMemoryCollections, db: String, cmd: BsonDocument): BsonDocument {
        val target = cmd["aggregate"]
        if (target == null || !target.isString) return badValue("aggregate needs a collection name (database-level aggregates are not supported)")
        val pipeline = cmd["pipeline"]?.takeIf { it.isArray }?.asArray() ?: return badValue("aggregate needs a pipeline array")
        if (cmd["cursor"]?.isDocument != true) return badValue("The 'cursor' option is required, except for aggregate with the explain argument")
        var docs: List<BsonDocument> = collections.documents(db, target.asString().value)
        for (stage in pipeline) {
            val s = stage.takeIf { it.isDocument }?.asDocument()?.takeIf { it.size == 1 } ?: return badValue("each pipeline stage must be a document with one field")
            val (name, arg) = s.entries.first()
            docs = when (name) {
                "\$match" -> {
                    val filter = arg.takeIf { it.isDocument }?.asDocument() ?: return badValue("\$match needs a document")
                    try {
                        collections.filterDocuments(docs, filter)
                    } catch (e: IllegalArgumentException) {
                        return badValue(e.message ?: "bad filter")
                    }
                }
                "\$skip" -> docs.drop(arg.takeIf { it.isNumber }?.asNumber()?.intValue()?.takeIf { it >= 0 } ?: return badValue("\$skip needs a non-negative number"))
                "\$limit" -> docs.take(arg.takeIf { it.isNumber }?.asNumber()?.intValue()?.takeIf { it > 0 } ?: return badValue("\$limit needs a positive number"))
                else -> return badValue("Unrecognized pipeline stage name: '$name'")
            }
        }
        return cursorReply(docs, "$db.${target.asString().value}")
    }

    fun listCollections(collections: InMemoryCollections, db: String, cmd: BsonDocument): BsonDocument {
        val name = (cmd["filter"] as? BsonDocument)?.get("name")?.takeIf { it.isString }?.asString()?.value
        val infos = collections.collectionNames(db).filter { name == null || it == name }.map {
            BsonDocument("name", BsonString(it)).append("type", BsonString("collection")).append("options", BsonDocument())
                .append("info", BsonDocument("readOnly", org.bson.BsonBoolean.FALSE))
        }
        return cursorReply(infos, "$db.\$cmd.listCollections")
    }

    fun listIndexes(collections: InMemoryCollections, db: String, cmd: BsonDocument): BsonDocument {
        val coll = cmd["listIndexes"]?.takeIf { it.isString }?.asString()?.value ?: return badValue("listIndexes needs a collection name")
        if (coll !in collections.collectionNames(db)) {
            return WireServer.error(26, "NamespaceNotFound", "ns does not exist: $db.$coll")
        }
        val idIndex = BsonDocument("v", BsonInt32(2)).append("key", BsonDocument("_id", BsonInt32(1))).append("name", BsonString("_id_"))
        return cursorReply(listOf(idIndex), "$db.$coll")
    }

    /** `{cursor: {firstBatch: [docs], id: 0, ns}, ok: 1}`. */
    fun cursorReply(docs: List<BsonDocument>, ns: String): BsonDocument =
        BsonDocument("cursor", BsonDocument("firstBatch", BsonArray(docs.map { it.clone() })).append("id", BsonInt64(0)).append("ns", BsonString(ns)))
            .append("ok", BsonInt32(1))

    private fun badValue(msg: String) = WireServer.error(2, "BadValue", msg)
}
