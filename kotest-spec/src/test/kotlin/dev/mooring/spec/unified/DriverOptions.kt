package dev.mooring.spec.unified

import dev.mooring.driver.AggregateOptions
import dev.mooring.driver.BulkWriteOptions
import dev.mooring.driver.CountOptions
import dev.mooring.driver.DeleteOptions
import dev.mooring.driver.DistinctOptions
import dev.mooring.driver.EstimatedDocumentCountOptions
import dev.mooring.driver.FindOneAndDeleteOptions
import dev.mooring.driver.FindOneAndReplaceOptions
import dev.mooring.driver.FindOneAndUpdateOptions
import dev.mooring.driver.FindOptions
import dev.mooring.driver.Hint
import dev.mooring.driver.InsertManyOptions
import dev.mooring.driver.InsertOneOptions
import dev.mooring.driver.MooringRawDataOption
import dev.mooring.driver.RawData
import dev.mooring.driver.ReadConcern
import dev.mooring.driver.ReplaceOptions
import dev.mooring.driver.ReturnDocument
import dev.mooring.driver.Update
import dev.mooring.driver.UpdateOptions
import dev.mooring.driver.WriteModel
import dev.mooring.sdam.WriteAcknowledgement
import dev.mooring.sdam.WriteConcern
import org.bson.BsonDocument
import org.bson.BsonValue

/**
 * The unified format's CRUD arguments (crud.md's option names) as the driver's typed options
 * (`dev.mooring.driver`). Every argument is either mapped or refused: an argument the driver has
 * no option for fails the operation with [UnsupportedOperationException] naming it (the test then
 * fails as unsupported by the runner), never silently dropped. `rawData` (MongoDB's internal option,
 * [MooringRawDataOption]) is mapped as the driver's [RawData]. Pure.
 */
@OptIn(MooringRawDataOption::class)
object DriverOptions {
    /** Arguments every collection helper takes that are not options: the session entity and the operation's timeoutMS. */
    private val COMMON = setOf("session", "timeoutMS")

    /** Fails naming the first argument of [a] outside [known] (plus [COMMON]). */
    fun requireKnown(operation: String, a: CrudOperations.Args, known: Set<String>) {
        (a.json.keys - known - COMMON).firstOrNull()?.let {
            throw UnsupportedOperationException("$operation argument '$it': the driver's $operation has no such option")
        }
    }

    private fun CrudOperations.Args.int(k: String): Int? = optional(k)?.asNumber()?.intValue()
    private fun CrudOperations.Args.long(k: String): Long? = optional(k)?.asNumber()?.longValue()
    private fun CrudOperations.Args.bool(k: String): Boolean? = optional(k)?.asBoolean()?.value
    private fun CrudOperations.Args.document(k: String): BsonDocument? = optional(k)?.asDocument()
    private fun CrudOperations.Args.hint(): Hint? = optional("hint")?.let(::hint)
    /** The `rawData` argument as the driver's option (opted in: the spec tests exercise it). */
    fun CrudOperations.Args.rawData(): RawData? = bool("rawData")?.let(RawData::of)
    private fun CrudOperations.Args.documents(k: String): List<BsonDocument>? = optional(k)?.asArray()?.map { it.asDocument() }

    /** A `hint`: an index name or a key pattern. */
    fun hint(v: BsonValue): Hint = if (v.isString) Hint.Name(v.asString().value) else Hint.Keys(v.asDocument())

    /** An `update` argument: an update document or a pipeline. */
    fun update(v: BsonValue): Update = if (v.isArray) Update.Pipeline(v.asArray().map { it.asDocument() }) else Update.Operators(v.asDocument())

    private fun returnDocument(a: CrudOperations.Args): ReturnDocument =
        if (a.optional("returnDocument")?.asString()?.value.equals("after", ignoreCase = true)) ReturnDocument.AFTER else ReturnDocument.BEFORE

    fun find(name: String, a: CrudOperations.Args): FindOptions {
        requireKnown(name, a, FIND)
        return FindOptions(
            batchSize = a.int("batchSize"), limit = if (name == "findOne") -1 else a.int("limit"), skip = a.int("skip"),
            projection = a.document("projection"), sort = a.document("sort"), hint = a.hint(), collation = a.document("collation"),
            let = a.document("let"), comment = a.optional("comment"), maxTimeMS = a.long("maxTimeMS"), maxAwaitTimeMS = a.long("maxAwaitTimeMS"),
            allowDiskUse = a.bool("allowDiskUse"), cursorType = CursorOperations.cursorType(a), noCursorTimeout = a.bool("noCursorTimeout"),
            min = a.document("min"), max = a.document("max"), returnKey = a.bool("returnKey"), showRecordId = a.bool("showRecordId"),
            timeoutMode = CursorOperations.timeoutMode(a), rawData = a.rawData(),
        )
    }

    private val FIND = setOf(
        "filter", "batchSize", "limit", "skip", "projection", "sort", "hint", "collation", "let", "comment", "maxTimeMS", "maxAwaitTimeMS",
        "allowDiskUse", "cursorType", "noCursorTimeout", "min", "max", "returnKey", "showRecordId", "timeoutMode", "rawData",
    )

    fun aggregate(a: CrudOperations.Args): AggregateOptions {
        requireKnown("aggregate", a, setOf("pipeline", "allowDiskUse", "batchSize", "bypassDocumentValidation", "collation", "comment", "hint", "let", "maxTimeMS", "timeoutMode", "rawData"))
        return AggregateOptions(
            allowDiskUse = a.bool("allowDiskUse"), batchSize = a.int("batchSize"), bypassDocumentValidation = a.bool("bypassDocumentValidation"),
            collation = a.document("collation"), comment = a.optional("comment"), hint = a.hint(), let = a.document("let"),
            maxTimeMS = a.long("maxTimeMS"), timeoutMode = CursorOperations.timeoutMode(a), rawData = a.rawData(),
        )
    }

    fun countDocuments(a: CrudOperations.Args): CountOptions {
        requireKnown("countDocuments", a, setOf("filter", "collation", "hint", "limit", "maxTimeMS", "skip", "comment", "rawData"))
        return CountOptions(a.document("collation"), a.hint(), a.long("limit"), a.long("maxTimeMS"), a.long("skip"), a.optional("comment"), a.rawData())
    }

    fun estimatedDocumentCount(a: CrudOperations.Args): EstimatedDocumentCountOptions {
        requireKnown("estimatedDocumentCount", a, setOf("maxTimeMS", "comment", "rawData"))
        return EstimatedDocumentCountOptions(a.long("maxTimeMS"), a.optional("comment"), a.rawData())
    }

    fun distinct(a: CrudOperations.Args): DistinctOptions {
        requireKnown("distinct", a, setOf("fieldName", "filter", "collation", "hint", "maxTimeMS", "comment", "rawData"))
        return DistinctOptions(a.document("collation"), a.hint(), a.long("maxTimeMS"), a.optional("comment"), a.rawData())
    }

    fun insertOne(a: CrudOperations.Args): InsertOneOptions {
        requireKnown("insertOne", a, setOf("document", "bypassDocumentValidation", "comment", "rawData"))
        return InsertOneOptions(a.bool("bypassDocumentValidation"), a.optional("comment"), a.rawData())
    }

    fun insertMany(a: CrudOperations.Args): InsertManyOptions {
        requireKnown("insertMany", a, setOf("documents", "ordered", "bypassDocumentValidation", "comment", "rawData"))
        return InsertManyOptions(a.bool("ordered") ?: true, a.bool("bypassDocumentValidation"), a.optional("comment"), a.rawData())
    }

    fun update(name: String, a: CrudOperations.Args): UpdateOptions {
        requireKnown(name, a, UPDATE + (if (name == "updateOne") setOf("sort") else emptySet()))
        return UpdateOptions(
            a.documents("arrayFilters"), a.bool("bypassDocumentValidation"), a.document("collation"), a.hint(), a.bool("upsert"),
            a.document("let"), a.optional("comment"), a.document("sort"), a.rawData(),
        )
    }

    private val UPDATE = setOf("filter", "update", "arrayFilters", "bypassDocumentValidation", "collation", "hint", "upsert", "let", "comment", "rawData")

    fun replace(a: CrudOperations.Args): ReplaceOptions {
        requireKnown("replaceOne", a, setOf("filter", "replacement", "bypassDocumentValidation", "collation", "hint", "upsert", "let", "comment", "sort", "rawData"))
        return ReplaceOptions(a.bool("bypassDocumentValidation"), a.document("collation"), a.hint(), a.bool("upsert"), a.document("let"), a.optional("comment"), a.document("sort"), a.rawData())
    }

    fun delete(name: String, a: CrudOperations.Args): DeleteOptions {
        requireKnown(name, a, setOf("filter", "collation", "hint", "let", "comment", "rawData"))
        return DeleteOptions(a.document("collation"), a.hint(), a.document("let"), a.optional("comment"), a.rawData())
    }

    fun findOneAndUpdate(a: CrudOperations.Args): FindOneAndUpdateOptions {
        requireKnown("findOneAndUpdate", a, FIND_AND_MODIFY + setOf("update", "arrayFilters", "bypassDocumentValidation", "returnDocument", "upsert"))
        return FindOneAndUpdateOptions(
            a.documents("arrayFilters"), a.bool("bypassDocumentValidation"), a.document("collation"), a.hint(), a.long("maxTimeMS"),
            a.document("projection"), returnDocument(a), a.document("sort"), a.bool("upsert"), a.document("let"), a.optional("comment"), a.rawData(),
        )
    }

    fun findOneAndReplace(a: CrudOperations.Args): FindOneAndReplaceOptions {
        requireKnown("findOneAndReplace", a, FIND_AND_MODIFY + setOf("replacement", "bypassDocumentValidation", "returnDocument", "upsert"))
        return FindOneAndReplaceOptions(
            a.bool("bypassDocumentValidation"), a.document("collation"), a.hint(), a.long("maxTimeMS"), a.document("projection"),
            returnDocument(a), a.document("sort"), a.bool("upsert"), a.document("let"), a.optional("comment"), a.rawData(),
        )
    }

    fun findOneAndDelete(a: CrudOperations.Args): FindOneAndDeleteOptions {
        requireKnown("findOneAndDelete", a, FIND_AND_MODIFY)
        return FindOneAndDeleteOptions(a.document("collation"), a.hint(), a.long("maxTimeMS"), a.document("projection"), a.document("sort"), a.document("let"), a.optional("comment"), a.rawData())
    }

    private val FIND_AND_MODIFY = setOf("filter", "collation", "hint", "maxTimeMS", "projection", "sort", "let", "comment", "rawData")

    fun bulkWrite(a: CrudOperations.Args): BulkWriteOptions {
        requireKnown("bulkWrite", a, setOf("requests", "ordered", "bypassDocumentValidation", "let", "comment", "rawData"))
        return BulkWriteOptions(a.bool("ordered") ?: true, a.bool("bypassDocumentValidation"), a.document("let"), a.optional("comment"), a.rawData())
    }

    /** One `requests` element of bulkWrite (`{insertOne: {...}}`, ...) as a [WriteModel]. */
    fun writeModel(request: BsonDocument): WriteModel<BsonDocument> {
        val (kind, value) = request.entries.singleOrNull() ?: throw IllegalArgumentException("a bulkWrite request must have exactly one key: $request")
        val a = CrudOperations.Args.of(value.asDocument())
        fun known(vararg keys: String) = (value.asDocument().keys - keys.toSet()).firstOrNull()?.let {
            throw UnsupportedOperationException("bulkWrite $kind model argument '$it': the driver's WriteModel.${kind.replaceFirstChar(Char::uppercase)} has no such field")
        }
        val filter = { value.asDocument()["filter"]?.asDocument() ?: throw IllegalArgumentException("bulkWrite $kind needs a filter") }
        val v = value.asDocument()
        return when (kind) {
            "insertOne" -> { known("document"); WriteModel.InsertOne(v.getDocument("document")) }
            "updateOne" -> {
                known("filter", "update", "arrayFilters", "collation", "hint", "upsert", "sort")
                WriteModel.UpdateOne(filter(), update(v["update"]!!), a.documents("arrayFilters"), a.document("collation"), a.hint(), a.bool("upsert"), a.document("sort"))
            }
            "updateMany" -> {
                known("filter", "update", "arrayFilters", "collation", "hint", "upsert")
                WriteModel.UpdateMany(filter(), update(v["update"]!!), a.documents("arrayFilters"), a.document("collation"), a.hint(), a.bool("upsert"))
            }
            "replaceOne" -> {
                known("filter", "replacement", "collation", "hint", "upsert", "sort")
                WriteModel.ReplaceOne(filter(), v.getDocument("replacement"), a.document("collation"), a.hint(), a.bool("upsert"), a.document("sort"))
            }
            "deleteOne" -> { known("filter", "collation", "hint"); WriteModel.DeleteOne(filter(), a.document("collation"), a.hint()) }
            "deleteMany" -> { known("filter", "collation", "hint"); WriteModel.DeleteMany(filter(), a.document("collation"), a.hint()) }
            else -> throw UnsupportedOperationException("bulkWrite request $kind")
        }
    }

    /** An entity's `readConcern` document (`{level}`) as the driver's [ReadConcern]. */
    fun readConcern(d: BsonDocument): ReadConcern {
        (d.keys - "level").firstOrNull()?.let { throw UnsupportedOperationException("readConcern field $it") }
        return ReadConcern(d.getString("level", null)?.value)
    }

    /** An entity's `writeConcern` document (`{w, j/journal, wtimeoutMS/wtimeout}`) as the driver's [WriteConcern]. */
    fun writeConcern(d: BsonDocument): WriteConcern {
        (d.keys - setOf("w", "j", "journal", "wtimeout", "wtimeoutMS")).firstOrNull()?.let { throw UnsupportedOperationException("writeConcern field $it") }
        val w = d["w"]?.let { if (it.isNumber) WriteAcknowledgement.Nodes(it.asNumber().intValue()) else WriteAcknowledgement.Tag(it.asString().value) }
        val wtimeout = (d["wtimeoutMS"] ?: d["wtimeout"])?.asNumber()?.longValue()
        val journal = (d["journal"] ?: d["j"])?.asBoolean()?.value
        return WriteConcern(w, wtimeout, journal)
    }
}
