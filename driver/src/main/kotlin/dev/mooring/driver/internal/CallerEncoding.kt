package dev.mooring.driver.internal

import dev.mooring.events.InternalMooringApi
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
    public fun <T : Any> encodeForInsert(document: T, codec: Codec<T>): RawBsonDocument = encoder.encodeWithId(document, codec).first
}
