package dev.mooring.driver

import dev.mooring.events.MooringException

/**
 * A document the server returned could not be decoded into the collection's document class
 * (a missing field, a field of another BSON type, ...). Names the [namespace], the document
 * class and, when known, the [field] being read; the codec's error is the cause. Immutable but
 * for its error labels, which are thread-safe.
 */
public class DocumentDecodingException(
    /** The namespace (`db.collection`) read from. */
    public val namespace: String,
    /** The field being decoded when decoding failed, or null when unknown. */
    public val field: String?,
    documentClass: String,
    cause: Throwable,
) : MooringException(
    "cannot decode a document of $namespace into $documentClass" + (field?.let { " at field '$it'" } ?: "") + ": ${cause.message}",
    cause,
)
