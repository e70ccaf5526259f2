package dev.mooring.driver.internal

import dev.mooring.events.InternalMooringApi
import dev.mooring.driver.WriteModel
import org.bson.RawBsonDocument
import org.bson.codecs.Codec

/**
 * Not API ([InternalMooringApi], for the Java facade, which encodes a write's documents on the
 * caller's thread before it hands the operation over): encodes as the driver's own write path
 * does ([DocumentEncoder]: one array about the size of the last document instead of a chain of
 * doubling ones, and an insert's generated `_id` written while encoding instead of prepended by a
 * copy). The driver sends the [RawBsonDocument]s it returns as they are. Thread-safe; keep one
 * per collection (its size hint follows that collection's documents).
 */
@InternalMooringApi
public class CallerEncoding {
    private val encoder = DocumentEncoder()

    /** [document] as BSON bytes, encoded by [codec] (a [RawBsonDocument] is returned as is). */
    public fun <T : Any> encode(document: T, codec: Codec<T>): RawBsonDocument = encoder.encode(document, codec)

    /**
     * [document] as an insert sends it: with its own `_id`, else a new ObjectId as the first field
     * (crud.md "Generated identifiers"); [document] is not changed.
     */
    public fun <T : Any> encodeForInsert(document: T, codec: Codec<T>): RawBsonDocument = encoder.batch(1).encodeForInsert(document, codec)

    /**
     * [documents] as [encodeForInsert] encodes each, together: they share their arrays and one
     * writer ([DocumentEncoder.Batch]), as the driver's own insertMany encodes them.
     */
    public fun <T : Any> encodeAllForInsert(documents: List<T>, codec: Codec<T>): List<RawBsonDocument> {
        val batch = encoder.batch(documents.size)
        return documents.map { batch.encodeForInsert(it, codec) }
    }

    /**
     * [models] with their documents encoded, together as [encodeAllForInsert] encodes: an
     * insert's as [encodeForInsert], a replacement as [encode] (a [RawBsonDocument] in the place
     * of a [T], which the driver sends as it is); updates and deletes as they are.
     */
    @Suppress("UNCHECKED_CAST")
    public fun <T : Any> encodeModels(models: List<WriteModel<T>>, codec: Codec<T>): List<WriteModel<T>> {
        val batch = encoder.batch(models.size)
        return models.map { model ->
            when (model) {
                is WriteModel.InsertOne -> WriteModel.InsertOne(batch.encodeForInsert(model.document, codec) as T)
                is WriteModel.ReplaceOne -> WriteModel.ReplaceOne(model.filter, batch.encode(model.replacement, codec) as T, model.collation, model.hint, model.upsert, model.sort)
                is WriteModel.UpdateOne, is WriteModel.UpdateMany, is WriteModel.DeleteOne, is WriteModel.DeleteMany -> model
            }
        }
    }
}
