package dev.mooring.spec.unified

import dev.mooring.driver.ClientBulkWriteException
import dev.mooring.driver.ClientBulkWriteOptions
import dev.mooring.driver.ClientBulkWriteResult
import dev.mooring.driver.ClientNamespacedWriteModel
import dev.mooring.driver.WriteConcernError
import dev.mooring.driver.WriteError
import dev.mooring.driver.bulkWrite
import kotlinx.serialization.json.JsonObject
import org.bson.BsonArray
import org.bson.BsonBoolean
import org.bson.BsonDocument
import org.bson.BsonInt64
import org.bson.BsonString
import org.bson.BsonValue

/**
 * The unified format's `clientBulkWrite` through the driver's client bulk write
 * ([dev.mooring.driver.bulkWrite] on the client's cluster, bulk-write.md `MongoClient.bulkWrite`):
 * each of the `models` (`{insertOne: {namespace, document}}`, ...) as a
 * [ClientNamespacedWriteModel] of BSON documents (the fields but `namespace` mapped as the
 * collection bulkWrite's requests are, [DriverOptions.writeModel]), the options `ordered`,
 * `bypassDocumentValidation`, `comment`, `let`, `verboseResults`, `writeConcern` (else the
 * entity's), in the operation's session, under the entity's timeoutMS. The result is shaped as
 * the format's BulkWriteResult (`insertResults`, `updateResults`, `deleteResults` with verbose
 * results), and a [ClientBulkWriteException]'s write errors, write concern errors and partial
 * result as `expectError` reads them ([writeErrors], [writeConcernErrors], [partialResult]). Stateless.
 */
object ClientBulkWriteOperation {
    private val OPTIONS = setOf("models", "ordered", "bypassDocumentValidation", "comment", "let", "writeConcern", "verboseResults", "session", "rawData")

    suspend fun execute(t: CrudTarget, args: JsonObject): BsonValue {
        val a = CrudOperations.Args(args)
        (args.keys - OPTIONS).firstOrNull()?.let { throw UnsupportedOperationException("clientBulkWrite argument '$it'") }
        val models = a.array("models").map { model(it.asDocument()) }
        val writeConcern = (a.optional("writeConcern")?.asDocument() ?: t.options.writeConcern)?.let(DriverOptions::writeConcern)
        val options = ClientBulkWriteOptions(
            ordered = a.optional("ordered")?.asBoolean()?.value ?: true,
            bypassDocumentValidation = a.optional("bypassDocumentValidation")?.asBoolean()?.value,
            let = a.optional("let")?.asDocument(),
            writeConcern = writeConcern,
            comment = a.optional("comment"),
            verboseResults = a.optional("verboseResults")?.asBoolean()?.value,
            rawData = with(DriverOptions) { a.rawData() },
        )
        return result(t.cluster.bulkWrite(models, options, t.session, t.options.timeoutMS))
    }

    /** `{insertOne: {namespace, document}}` (or another kind) as the driver's model. */
    private fun model(d: BsonDocument): ClientNamespacedWriteModel<BsonDocument> {
        val (kind, value) = d.entries.singleOrNull() ?: throw IllegalArgumentException("a clientBulkWrite model must have exactly one key: $d")
        val fields = value.asDocument().clone()
        val namespace = fields.remove("namespace")?.asString()?.value ?: throw IllegalArgumentException("clientBulkWrite $kind needs a namespace")
        return ClientNamespacedWriteModel.of(namespace, DriverOptions.writeModel(BsonDocument(kind, fields)))
    }

    /** [r] as the format's BulkWriteResult; `{acknowledged: false}` when unacknowledged. */
    fun result(r: ClientBulkWriteResult): BsonDocument = when (r) {
        ClientBulkWriteResult.Unacknowledged -> BsonDocument("acknowledged", BsonBoolean.FALSE)
        is ClientBulkWriteResult.Acknowledged -> {
            val d = BsonDocument("insertedCount", BsonInt64(r.insertedCount)).append("upsertedCount", BsonInt64(r.upsertedCount))
                .append("matchedCount", BsonInt64(r.matchedCount)).append("modifiedCount", BsonInt64(r.modifiedCount))
                .append("deletedCount", BsonInt64(r.deletedCount))
            r.verboseResults?.let { v ->
                d["insertResults"] = BsonDocument().also { m -> v.insertResults.forEach { (i, x) -> m["$i"] = BsonDocument("insertedId", x.insertedId) } }
                d["updateResults"] = BsonDocument().also { m ->
                    v.updateResults.forEach { (i, x) ->
                        m["$i"] = BsonDocument("matchedCount", BsonInt64(x.matchedCount)).append("modifiedCount", BsonInt64(x.modifiedCount))
                            .also { u -> x.upsertedId?.let { u["upsertedId"] = it } }
                    }
                }
                d["deleteResults"] = BsonDocument().also { m -> v.deleteResults.forEach { (i, x) -> m["$i"] = BsonDocument("deletedCount", BsonInt64(x.deletedCount)) } }
            }
            d
        }
    }

    /** The write errors of [error] by model index (`{code, message, details}`), or null when it is no client bulk write error. */
    fun writeErrors(error: Throwable): BsonDocument? = (error as? ClientBulkWriteException)?.writeErrors?.let { errors ->
        BsonDocument().also { d -> errors.toSortedMap().forEach { (i, e) -> d["$i"] = writeError(e) } }
    }

    /** The write concern errors of [error] (`{code, message, details}`), or null when it is no client bulk write error. */
    fun writeConcernErrors(error: Throwable): BsonArray? = (error as? ClientBulkWriteException)?.writeConcernErrors?.let { errors -> BsonArray(errors.map(::writeConcernError)) }

    /** The partial result of [error], or null. */
    fun partialResult(error: Throwable): BsonDocument? = (error as? ClientBulkWriteException)?.partialResult?.let(::result)

    private fun writeError(e: WriteError) = error(e.code, e.message, e.details)

    private fun writeConcernError(e: WriteConcernError) = error(e.code, e.message, e.details)

    /** `{code, message, details}`, without `details` when the server sent none. */
    private fun error(code: Int, message: String, details: BsonDocument) =
        BsonDocument("code", org.bson.BsonInt32(code)).append("message", BsonString(message)).also { if (details.isNotEmpty()) it["details"] = details }
}
