package dev.mooring.driver.internal

import dev.mooring.driver.Update
import dev.mooring.driver.WriteModel
import org.bson.BsonBoolean
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonValue
import org.bson.RawBsonDocument
import org.bson.codecs.BsonDocumentCodec

/** The three write commands and the array each one carries its statements in. */
internal enum class WriteKind(val command: String, val array: String) {
    INSERT("insert", "documents"),
    UPDATE("update", "updates"),
    DELETE("delete", "deletes"),
}

/**
 * One statement of a write command, encoded: the element of its command's array ([document], as
 * BSON bytes), the caller's index of its write model, whether it touches many documents (which
 * makes its batch a non-retryable write) and, for an insert, the document's `_id`. Immutable.
 */
internal class WriteStatement(
    val index: Int,
    val kind: WriteKind,
    val document: RawBsonDocument,
    val multi: Boolean,
    val insertedId: BsonValue?,
    /** True when the statement carries a `hint`. */
    val hinted: Boolean,
    /** [document]'s size in bytes. */
    val size: Int,
)

/**
 * Turns write models into [WriteStatement]s (crud.md's rules for each model), checking every
 * document against [maxBsonObjectSize] before anything is sent. Stateless.
 */
internal object WriteStatements {
    /** [models] as statements, their documents encoded together ([DocumentEncoder.Batch]). */
    fun <T : Any> of(models: List<WriteModel<T>>, codec: DocumentCodec<T>, maxBsonObjectSize: Int): List<WriteStatement> {
        val batch = codec.batch(models.size)
        return models.mapIndexed { i, m -> of(i, m, codec, batch, maxBsonObjectSize) }
    }

    private fun <T : Any> of(index: Int, model: WriteModel<T>, codec: DocumentCodec<T>, batch: DocumentEncoder.Batch, max: Int): WriteStatement = when (model) {
        is WriteModel.InsertOne -> {
            val doc = batch.encodeForInsert(model.document, codec.codec)
            checkSize(batch.lastSize, max, index)
            WriteStatement(index, WriteKind.INSERT, doc, false, batch.lastId, false, batch.lastSize)
        }
        is WriteModel.UpdateOne -> update(batch, index, model.filter.toDoc(), updateValue(model.update), false, model.upsert, model.arrayFilters, model.collation, model.hint, model.sort)
        is WriteModel.UpdateMany -> update(batch, index, model.filter.toDoc(), updateValue(model.update), true, model.upsert, model.arrayFilters, model.collation, model.hint, null)
        is WriteModel.ReplaceOne -> {
            val replacement = batch.encode(model.replacement, codec.codec)
            checkReplacement(replacement)
            checkSize(batch.lastSize, max, index)
            update(batch, index, model.filter.toDoc(), replacement, false, model.upsert, null, model.collation, model.hint, model.sort)
        }
        is WriteModel.DeleteOne -> delete(batch, index, model.filter.toDoc(), 1, model.collation, model.hint)
        is WriteModel.DeleteMany -> delete(batch, index, model.filter.toDoc(), 0, model.collation, model.hint)
    }

    private fun update(
        batch: DocumentEncoder.Batch,
        index: Int,
        filter: BsonDocument,
        u: BsonValue,
        multi: Boolean,
        upsert: Boolean?,
        arrayFilters: List<org.bson.conversions.Bson>?,
        collation: org.bson.conversions.Bson?,
        hint: dev.mooring.driver.Hint?,
        sort: org.bson.conversions.Bson?,
    ): WriteStatement {
        val fields = 2 + (if (multi) 1 else 0) + present(upsert) + present(arrayFilters) + present(collation) + present(hint) + present(sort)
        val s = BsonDocument(capacityFor(fields)).append("q", filter).append("u", u)
        if (multi) s["multi"] = BsonBoolean.TRUE
        s.opt("upsert", upsert)
        arrayFilters?.let { s["arrayFilters"] = it.toArray() }
        s.optDoc("collation", collation).opt("hint", hint).optDoc("sort", sort)
        return WriteStatement(index, WriteKind.UPDATE, batch.encode(s, CODEC), multi, null, hint != null, batch.lastSize)
    }

    private fun delete(batch: DocumentEncoder.Batch, index: Int, filter: BsonDocument, limit: Int, collation: org.bson.conversions.Bson?, hint: dev.mooring.driver.Hint?): WriteStatement {
        val s = BsonDocument(capacityFor(2 + present(collation) + present(hint))).append("q", filter).append("limit", BsonInt32(limit))
        s.optDoc("collation", collation).opt("hint", hint)
        return WriteStatement(index, WriteKind.DELETE, batch.encode(s, CODEC), limit == 0, null, hint != null, batch.lastSize)
    }

    /** crud.md "Update vs. Replace Validation": an update document is non-empty and starts with an operator. */
    fun updateValue(update: Update): BsonValue = when (update) {
        is Update.Operators -> update.document.toDoc().also {
            require(!it.isEmpty()) { "an update document must not be empty" }
            require(it.firstKey.startsWith("$")) { "an update document must contain only update operators (first key '${it.firstKey}' does not start with '$'); use replaceOne to replace a document" }
        }
        is Update.Pipeline -> update.stages.toArray()
    }

    /** crud.md: a replacement document must not start with an update operator. */
    fun checkReplacement(replacement: BsonDocument) {
        if (replacement is RawBsonDocument) {
            // from its bytes: isEmpty and firstKey would each open a reader on it
            val b = replacement.byteBuffer.asNIO()
            val start = b.position()
            if (b.remaining() <= 5 || b.get(start + 5) != '$'.code.toByte()) return
        }
        if (!replacement.isEmpty()) {
            val first = replacement.firstKey
            require(!first.startsWith("$")) { "a replacement document must not contain update operators (first key '$first'); use updateOne to update a document" }
        }
    }

    private fun checkSize(size: Int, max: Int, index: Int) {
        require(size <= max) { "the document at index $index is $size bytes, larger than the server's maxBsonObjectSize $max" }
    }

    private val CODEC = BsonDocumentCodec()
}
