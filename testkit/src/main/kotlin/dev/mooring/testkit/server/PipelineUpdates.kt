package dev.mooring.testkit.server

import de.bwaldvogel.mongo.backend.aggregation.Aggregation
import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString
import java.util.stream.Stream

/**
 * An update given as a pipeline (MongoDB 4.2+), composed from the data engine's own parts: the
 * engine's aggregation stages ([apply]: `$addFields`/`$set`, `$project`/`$unset`,
 * `$replaceRoot`/`$replaceWith`, the only stages mongod accepts in an update) compute the new
 * document, which the engine then stores as a replacement. The upsert document is the pipeline
 * applied to the document the engine's own upsert builds from the filter's equality fields.
 * Pure.
 */
internal object PipelineUpdates {
    /** mongod's refusal of any other stage in an update pipeline: InvalidOptions. */
    private const val INVALID_OPTIONS = 72

    /** The stages mongod accepts in an update, each with the engine's name for it. */
    private val STAGES = mapOf(
        "\$addFields" to "\$addFields", "\$set" to "\$addFields", "\$project" to "\$project", "\$unset" to "\$unset",
        "\$replaceRoot" to "\$replaceRoot", "\$replaceWith" to "\$replaceRoot",
    )

    /** The error mongod answers for [pipeline] as an update (a stage it does not allow, a malformed entry), or null. */
    fun refusal(pipeline: BsonArray): BsonDocument? {
        for (stage in pipeline) {
            val name = (stage as? BsonDocument)?.takeIf { it.size == 1 }?.firstKey
                ?: return WireServer.error(14, "TypeMismatch", "Each element of the 'pipeline' array must be an object")
            if (name !in STAGES) return WireServer.error(INVALID_OPTIONS, "InvalidOptions", "$name is not allowed to be used within an update")
        }
        return null
    }

    /**
     * [doc] after [pipeline] (checked by [refusal]), run by the engine's aggregation stages; the
     * original `_id` first when the pipeline dropped it (as mongod keeps it). Throws what the
     * engine throws for a bad stage or expression.
     */
    fun apply(pipeline: BsonArray, doc: BsonDocument): BsonDocument {
        val stages = pipeline.map { stage ->
            val (name, body) = stage.asDocument().entries.first()
            val engineName = STAGES.getValue(name)
            BackendDocuments.toBackend(BsonDocument(engineName, if (name == "\$replaceWith") BsonDocument("newRoot", body) else body))
        }
        val result = Aggregation.fromPipeline(stages, null, null, null, null).runStages(Stream.of(BackendDocuments.toBackend(doc)))
        val updated = result.singleOrNull()?.let(BackendDocuments::fromBackend) ?: BsonDocument()
        val id = doc["_id"] ?: return updated
        if (updated.containsKey("_id")) return updated
        return BsonDocument("_id", id).apply { putAll(updated) }
    }

    /** A one-statement update command's statement. */
    fun statement(cmd: BsonDocument): BsonDocument? = (cmd["updates"] as? BsonArray)?.singleOrNull() as? BsonDocument

    /** The one-statement update of [collection]: [doc] replacing the document whose `_id` it has. */
    fun replaceById(collection: BsonString, doc: BsonDocument, upsert: Boolean = false): BsonDocument =
        BsonDocument("update", collection).append(
            "updates",
            BsonArray(listOf(BsonDocument("q", BsonDocument("_id", doc["_id"])).append("u", doc).append("upsert", org.bson.BsonBoolean(upsert)))),
        )

    /**
     * The upsert of a pipeline update: the engine's own upsert document for [filter] (its
     * equality fields, and the `_id` the engine gives it), found by letting the engine upsert with
     * an update that sets nothing else, then removed and inserted again as [pipeline] makes it.
     * [engine] runs a command on the backend. The reply is the update's: `{n: 1, nModified: 0,
     * upserted: [{index: 0, _id}], ok: 1}` or the engine's error.
     */
    fun upsert(collection: BsonString, filter: BsonDocument, pipeline: BsonArray, engine: (BsonDocument) -> BsonDocument): BsonDocument {
        val marker = BsonDocument("\$setOnInsert", BsonDocument(MARKER, BsonInt32(1)))
        val seed = engine(BsonDocument("update", collection).append("updates", BsonArray(listOf(BsonDocument("q", filter).append("u", marker).append("upsert", org.bson.BsonBoolean.TRUE)))))
        val id = ((seed["upserted"] as? BsonArray)?.firstOrNull() as? BsonDocument)?.get("_id") ?: return seed
        val base = ((engine(BsonDocument("find", collection).append("filter", BsonDocument("_id", id)))["cursor"] as? BsonDocument)
            ?.getArray("firstBatch")?.firstOrNull() as? BsonDocument)?.clone()?.apply {
            remove(MARKER)
            // the filter's `_id: null` stays null (the engine generates an ObjectId for it)
            if (filter["_id"] is org.bson.BsonNull) put("_id", org.bson.BsonNull.VALUE)
        } ?: return seed
        engine(BsonDocument("delete", collection).append("deletes", BsonArray(listOf(BsonDocument("q", BsonDocument("_id", id)).append("limit", BsonInt32(1))))))
        val created = try {
            apply(pipeline, base)
        } catch (e: RuntimeException) {
            return engineError(e)
        }
        val inserted = engine(BsonDocument("insert", collection).append("documents", BsonArray(listOf(created))))
        if (inserted["ok"]?.asNumber()?.intValue() != 1 || inserted.containsKey("writeErrors")) return inserted
        return BsonDocument("n", BsonInt32(1)).append("nModified", BsonInt32(0))
            .append("upserted", BsonArray(listOf(BsonDocument("index", BsonInt32(0)).append("_id", created["_id"] ?: id))))
            .append("ok", BsonInt32(1))
    }

    /** The engine's refusal of a stage or expression as a server error reply. */
    fun engineError(e: RuntimeException): BsonDocument = when (e) {
        is de.bwaldvogel.mongo.exception.MongoServerError -> WireServer.error(e.code, e.codeName ?: "Location${e.code}", e.messageWithoutErrorCode)
        is de.bwaldvogel.mongo.exception.MongoServerException -> WireServer.error(8, "UnknownError", e.messageWithoutErrorCode)
        else -> WireServer.error(2, "BadValue", e.message ?: e.toString())
    }

    /** The field the seed of an upsert carries until its pipeline replaces it. */
    private const val MARKER = "__testkitUpsertSeed"
}
