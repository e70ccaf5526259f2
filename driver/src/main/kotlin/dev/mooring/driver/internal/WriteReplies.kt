package dev.mooring.driver.internal

import dev.mooring.driver.WriteConcernError
import dev.mooring.driver.WriteError
import org.bson.BsonDocument

/** Reading write command replies (`n`, `nModified`, `upserted`, `writeErrors`, `writeConcernError`, `errorLabels`). Stateless. */
internal object WriteReplies {
    fun count(reply: BsonDocument, field: String): Long = reply[field]?.takeIf { it.isNumber }?.asNumber()?.longValue() ?: 0

    /** The reply's write errors, their `index` mapped through [toModelIndex]. */
    fun writeErrors(reply: BsonDocument, toModelIndex: (Int) -> Int): List<WriteError> {
        val errors = reply["writeErrors"]?.takeIf { it.isArray }?.asArray() ?: return emptyList()
        return errors.map { v ->
            val e = v.asDocument()
            WriteError(
                code = e.getNumber("code", org.bson.BsonInt32(0)).intValue(),
                message = e.getString("errmsg", org.bson.BsonString("")).value,
                details = e["errInfo"]?.takeIf { it.isDocument }?.asDocument() ?: BsonDocument(),
                index = toModelIndex(e.getNumber("index", org.bson.BsonInt32(0)).intValue()),
            )
        }
    }

    fun writeConcernError(reply: BsonDocument): WriteConcernError? {
        val e = reply["writeConcernError"]?.takeIf { it.isDocument }?.asDocument() ?: return null
        return WriteConcernError(
            code = e.getNumber("code", org.bson.BsonInt32(0)).intValue(),
            codeName = e.getString("codeName", null)?.value,
            message = e.getString("errmsg", org.bson.BsonString("")).value,
            details = e["errInfo"]?.takeIf { it.isDocument }?.asDocument() ?: BsonDocument(),
        )
    }

    /** The reply's `errorLabels` (and those of its writeConcernError, for servers before 4.4). */
    fun errorLabels(reply: BsonDocument): List<String> {
        val top = reply["errorLabels"]?.takeIf { it.isArray }?.asArray().orEmpty()
        val wce = reply["writeConcernError"]?.takeIf { it.isDocument }?.asDocument()?.get("errorLabels")?.takeIf { it.isArray }?.asArray().orEmpty()
        return (top + wce).filter { it.isString }.map { it.asString().value }.distinct()
    }
}
