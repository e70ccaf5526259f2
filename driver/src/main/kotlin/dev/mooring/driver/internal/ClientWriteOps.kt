package dev.mooring.driver.internal

import dev.mooring.driver.ClientNamespacedWriteModel
import dev.mooring.driver.WriteModel
import org.bson.BsonBoolean
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString
import org.bson.BsonValue
import org.bson.RawBsonDocument
import org.bson.codecs.Codec
import org.bson.conversions.Bson

/** The three operations of a `bulkWrite` command's `ops` (bulk-write.md "Operations"), each with its entry's first key. */
internal enum class ClientOpKind(val key: String) { INSERT("insert"), UPDATE("update"), DELETE("delete") }

/**
 * One model of a client bulk write as an `ops` entry: [kind], the fields after the first (an
 * insert's encoded [insertDocument], else [fields]; the first is the kind's name with the
 * namespace's nsInfo index, known per command), the caller's [index] of the model, its
 * [namespace], whether it writes many documents ([multi]: its command is not retryable), an
 * insert's `_id`, and the entry's encoded [size] (an index is always an Int32, so the size does
 * not depend on it). Immutable.
 */
internal class ClientWriteOp private constructor(
    val index: Int,
    val namespace: String,
    val kind: ClientOpKind,
    private val fields: BsonDocument?,
    private val insertDocument: RawBsonDocument?,
    val multi: Boolean,
    val insertedId: BsonValue?,
    /**
     * Computed ([BsonSizes] for [fields]; an insert from its document's size), not by encoding
     * the entry: an insert's document is encoded once, by its codec.
     */
    val size: Int,
) {
    /** The `ops` entry with [nsIndex], the namespace's position in its command's nsInfo. */
    fun document(nsIndex: Int): BsonDocument = when (insertDocument) {
        null -> BsonDocument(kind.key, BsonInt32(nsIndex)).also { it.putAll(fields!!) }
        else -> BsonDocument(4).append(kind.key, BsonInt32(nsIndex)).append(DOCUMENT, insertDocument)
    }

    companion object {
        private const val DOCUMENT = "document"

        /** The entry's first element: type, the kind's name and its NUL, an Int32. */
        private fun first(kind: ClientOpKind) = 1 + kind.key.length + 1 + 4

        /** An insert of [document] ([documentSize] bytes) whose `_id` is [id]. */
        fun insert(index: Int, namespace: String, document: RawBsonDocument, documentSize: Int, id: BsonValue?): ClientWriteOp =
            ClientWriteOp(
                index, namespace, ClientOpKind.INSERT, null, document, false, id,
                // the entry's length and terminator, its first element, then `document`'s element
                4 + first(ClientOpKind.INSERT) + 1 + DOCUMENT.length + 1 + documentSize + 1,
            )

        /** An update or delete whose entry's fields after the first are [fields]. */
        fun of(index: Int, namespace: String, kind: ClientOpKind, fields: BsonDocument, multi: Boolean): ClientWriteOp =
            ClientWriteOp(index, namespace, kind, fields, null, multi, null, first(kind) + BsonSizes.document(fields))
    }
}

/**
 * Client bulk write models into [ClientWriteOp]s (bulk-write.md "Write Models" and "Building a
 * bulkWrite Command"): an insert's document gets an `_id` first when it has none; update
 * documents must start with an operator and replacements must not (crud.md's validation, before
 * anything is sent); `multi` is always sent; optional fields only when given. Stateless.
 */
internal object ClientWriteOps {
    /** [m] as the op at [index]; its documents encoded by [encoder] (one per bulk write: its documents share arrays). */
    fun of(index: Int, m: ClientNamespacedWriteModel<*>, encoder: DocumentEncoder.Batch): ClientWriteOp {
        @Suppress("UNCHECKED_CAST")
        val model = m as ClientNamespacedWriteModel<Any>
        return of(index, model.namespace, model.model, model.codec, encoder)
    }

    private fun of(index: Int, ns: String, model: WriteModel<Any>, codec: Codec<Any>, encoder: DocumentEncoder.Batch): ClientWriteOp = when (model) {
        is WriteModel.InsertOne -> {
            val doc = encoder.encodeForInsert(model.document, codec)
            ClientWriteOp.insert(index, ns, doc, encoder.lastSize, encoder.lastId)
        }
        is WriteModel.UpdateOne -> update(index, ns, model.filter, WriteStatements.updateValue(model.update), false, model.upsert, model.arrayFilters, model.collation, model.hint, model.sort)
        is WriteModel.UpdateMany -> update(index, ns, model.filter, WriteStatements.updateValue(model.update), true, model.upsert, model.arrayFilters, model.collation, model.hint, null)
        is WriteModel.ReplaceOne -> {
            val replacement = encoder.encode(model.replacement, codec)
            WriteStatements.checkReplacement(replacement)
            update(index, ns, model.filter, replacement, false, model.upsert, null, model.collation, model.hint, model.sort)
        }
        is WriteModel.DeleteOne -> delete(index, ns, model.filter, false, model.collation, model.hint)
        is WriteModel.DeleteMany -> delete(index, ns, model.filter, true, model.collation, model.hint)
    }

    private fun update(
        index: Int,
        ns: String,
        filter: Bson,
        mods: BsonValue,
        multi: Boolean,
        upsert: Boolean?,
        arrayFilters: List<Bson>?,
        collation: Bson?,
        hint: dev.mooring.driver.Hint?,
        sort: Bson?,
    ): ClientWriteOp {
        val d = BsonDocument("filter", filter.toDoc()).append("updateMods", mods)
        arrayFilters?.let { d["arrayFilters"] = it.toArray() }
        d.optDoc("collation", collation).opt("hint", hint).opt("upsert", upsert).optDoc("sort", sort)
        d["multi"] = BsonBoolean.valueOf(multi)
        return ClientWriteOp.of(index, ns, ClientOpKind.UPDATE, d, multi)
    }

    private fun delete(index: Int, ns: String, filter: Bson, multi: Boolean, collation: Bson?, hint: dev.mooring.driver.Hint?): ClientWriteOp {
        val d = BsonDocument("filter", filter.toDoc())
        d.optDoc("collation", collation).opt("hint", hint)
        d["multi"] = BsonBoolean.valueOf(multi)
        return ClientWriteOp.of(index, ns, ClientOpKind.DELETE, d, multi)
    }

    /** The nsInfo entry of [namespace]. */
    fun nsInfo(namespace: String): BsonDocument = BsonDocument("ns", BsonString(namespace))
}
