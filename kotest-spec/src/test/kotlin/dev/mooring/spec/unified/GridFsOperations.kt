package dev.mooring.spec.unified

import dev.mooring.driver.database
import dev.mooring.driver.gridfs.GridFSBucket
import dev.mooring.driver.gridfs.GridFSBucketOptions
import dev.mooring.driver.gridfs.GridFSFindOptions
import dev.mooring.driver.gridfs.GridFSUploadOptions
import dev.mooring.driver.gridfs.gridFSBucket
import dev.mooring.sdam.ClientSession
import java.util.HexFormat
import kotlinx.coroutines.flow.flowOf
import kotlinx.coroutines.flow.fold
import kotlinx.coroutines.flow.toList
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.contentOrNull
import kotlinx.serialization.json.jsonObject
import org.bson.BsonArray
import org.bson.BsonBinary
import org.bson.BsonDocument
import org.bson.BsonValue
import org.bson.json.JsonMode
import org.bson.json.JsonWriterSettings

/**
 * The unified format's GridFS `bucket` entity and its operations (unified-test-format.md
 * "Bucket Operations": upload, download, downloadByName, delete, deleteByName, find, rename,
 * renameByName, drop) run through the driver's public [GridFSBucket] API, plus the values they
 * save as entities (`saveResultAsEntity` of an upload: the file id) and the matching operators on
 * them (`$$matchesEntity`, `$$matchesHexBytes`), resolved into the expected values before they
 * are matched ([resolve]). One instance per test run; confined to the test's coroutines.
 */
class GridFsOperations {
    private val buckets = HashMap<String, GridFSBucket>()
    private val saved = HashMap<String, BsonValue>()

    fun isBucket(id: String): Boolean = id in buckets

    /**
     * Creates the bucket entity [id] on the database of [database] (its client and database
     * options applied, then `bucketOptions`); an option this runner does not map fails the test.
     */
    fun create(id: String, database: CrudTarget, bucketOptions: JsonObject?) {
        var db = database.cluster.database(database.database)
        database.options.readPreference?.let { db = db.withReadPreference(it) }
        database.options.readConcern?.let { db = db.withReadConcern(DriverOptions.readConcern(it)) }
        database.options.writeConcern?.let { db = db.withWriteConcern(DriverOptions.writeConcern(it)) }
        database.options.timeoutMS?.let { db = db.withTimeout(it) }
        val o = bucketOptions ?: JsonObject(emptyMap())
        // disableMD5 has no effect: the driver never computes the deprecated md5 (gridfs-spec.md: then a no-op)
        val concerns = entityOptions(JsonObject(o - setOf("bucketName", "chunkSizeBytes", "disableMD5")))
        buckets[id] = db.gridFSBucket(
            GridFSBucketOptions(
                bucketName = (o["bucketName"] as? JsonPrimitive)?.contentOrNull ?: "fs",
                chunkSizeBytes = (o["chunkSizeBytes"] as? JsonPrimitive)?.contentOrNull?.toInt() ?: GridFSBucketOptions.DEFAULT_CHUNK_SIZE_BYTES,
                readConcern = concerns.readConcern?.let(DriverOptions::readConcern),
                writeConcern = concerns.writeConcern?.let(DriverOptions::writeConcern),
                readPreference = concerns.readPreference,
                timeoutMS = concerns.timeoutMS,
            ),
        )
    }

    /** Runs the bucket operation [name] on bucket [id]; its result (or null), saved as [saveAs] when asked. */
    suspend fun execute(name: String, id: String, json: JsonObject, session: ClientSession?, saveAs: String?): BsonValue? {
        val args = UnifiedTestRun.bson(JsonObject(json - "session"))
        (args.keys - (ARGUMENTS[name] ?: throw UnsupportedOperationException("bucket operation $name")) - COMMON).firstOrNull()?.let {
            throw UnsupportedOperationException("bucket operation $name argument $it")
        }
        var bucket = buckets.getValue(id)
        args["timeoutMS"]?.let { bucket = bucket.withTimeout(it.asNumber().longValue()) }
        val result: BsonValue? = when (name) {
            "upload" -> bucket.upload(args.getString("filename").value, flowOf(hexBytes(args.getDocument("source"))), uploadOptions(args), session)
            "download" -> BsonBinary(bucket.download(args["id"]!!, session).concat())
            "downloadByName" -> BsonBinary(bucket.downloadByName(args.getString("filename").value, args["revision"]?.asNumber()?.intValue() ?: -1, session).concat())
            "find" -> BsonArray(bucket.find(args.getDocument("filter"), findOptions(args), session).toList().map { it.document })
            "delete" -> null.also { bucket.delete(args["id"]!!, session) }
            "deleteByName" -> null.also { bucket.deleteByName(args.getString("filename").value, session) }
            "rename" -> null.also { bucket.rename(args["id"]!!, args.getString("newFilename").value, session) }
            "renameByName" -> null.also { bucket.renameByName(args.getString("filename").value, args.getString("newFilename").value, session) }
            "drop" -> null.also { bucket.drop(session) }
            else -> throw UnsupportedOperationException("bucket operation $name")
        }
        if (saveAs != null) saved[saveAs] = result ?: throw UnsupportedOperationException("saveResultAsEntity ($saveAs) of the $name operation, which has no result")
        return result
    }

    /**
     * [expected] with each `{$$matchesEntity: id}` replaced by the value saved as `id` and each
     * `{$$matchesHexBytes: hex}` by those bytes as a binary: the matching rules are then the
     * plain ones (an equal value).
     */
    fun resolve(expected: JsonElement): JsonElement = when (expected) {
        is JsonObject -> {
            val entity = (expected["\$\$matchesEntity"] as? JsonPrimitive)?.contentOrNull
            val hex = (expected["\$\$matchesHexBytes"] as? JsonPrimitive)?.contentOrNull
            when {
                entity != null && expected.size == 1 -> json(saved[entity] ?: invalidTest("\$\$matchesEntity names '$entity', which is no saved value"))
                hex != null && expected.size == 1 -> json(BsonBinary(HexFormat.of().parseHex(hex)))
                else -> JsonObject(expected.mapValues { resolve(it.value) })
            }
        }
        is JsonArray -> JsonArray(expected.map { resolve(it) })
        else -> expected
    }

    private fun json(v: BsonValue): JsonElement =
        Json.parseToJsonElement(BsonDocument("v", v).toJson(JsonWriterSettings.builder().outputMode(JsonMode.EXTENDED).build())).jsonObject["v"]!!

    private fun hexBytes(source: BsonDocument): ByteArray {
        val hex = source["\$\$hexBytes"]?.takeIf { source.size == 1 } ?: throw UnsupportedOperationException("upload source $source (only \$\$hexBytes)")
        return HexFormat.of().parseHex(hex.asString().value)
    }

    @Suppress("DEPRECATION")
    private fun uploadOptions(a: BsonDocument) = GridFSUploadOptions(
        id = a["id"],
        metadata = a["metadata"]?.asDocument(),
        chunkSizeBytes = a["chunkSizeBytes"]?.asNumber()?.intValue(),
        contentType = a["contentType"]?.asString()?.value,
        aliases = a["aliases"]?.asArray()?.map { it.asString().value },
    )

    private fun findOptions(a: BsonDocument) = GridFSFindOptions(
        allowDiskUse = a["allowDiskUse"]?.asBoolean()?.value,
        batchSize = a["batchSize"]?.asNumber()?.intValue(),
        limit = a["limit"]?.asNumber()?.intValue(),
        maxTimeMS = a["maxTimeMS"]?.asNumber()?.longValue(),
        noCursorTimeout = a["noCursorTimeout"]?.asBoolean()?.value,
        skip = a["skip"]?.asNumber()?.intValue(),
        sort = a["sort"]?.asDocument(),
    )

    private suspend fun kotlinx.coroutines.flow.Flow<ByteArray>.concat(): ByteArray = fold(ByteArray(0)) { acc, b -> acc + b }

    companion object {
        /** The bucket operations of the format. */
        val OPERATIONS: Set<String> = setOf("upload", "download", "downloadByName", "find", "delete", "deleteByName", "rename", "renameByName", "drop")

        private val COMMON = setOf("timeoutMS")

        /**
         * The arguments of each operation; `disableMD5` is accepted and has no effect: the driver
         * never computes the deprecated md5 (gridfs-spec.md: without MD5 support the option is a no-op).
         */
        private val ARGUMENTS = mapOf(
            "upload" to setOf("filename", "source", "chunkSizeBytes", "metadata", "id", "contentType", "aliases", "disableMD5"),
            "download" to setOf("id"),
            "downloadByName" to setOf("filename", "revision"),
            "find" to setOf("filter", "sort", "skip", "limit", "batchSize", "maxTimeMS", "noCursorTimeout", "allowDiskUse"),
            "delete" to setOf("id"),
            "deleteByName" to setOf("filename"),
            "rename" to setOf("id", "newFilename"),
            "renameByName" to setOf("filename", "newFilename"),
            "drop" to emptySet(),
        )
    }
}
