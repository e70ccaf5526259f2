package dev.mooring.driver.internal

import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonValue
import org.bson.RawBsonDocument

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
        null -> BsonDocument(capacityFor(1 + fields!!.size)).append(kind.key, BsonInt32(nsIndex)).also { it.putAll(fields) }
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
