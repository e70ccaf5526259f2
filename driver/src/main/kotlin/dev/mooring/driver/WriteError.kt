package dev.mooring.driver

import org.bson.BsonDocument

/**
 * One failed write reported by the server (crud.md `WriteError`): an element of a reply's
 * `writeErrors`. [index] is the position of the write in the caller's request (the document in
 * insertMany, the model in bulkWrite; 0 for a single write). Immutable.
 */
public data class WriteError(
    /** The server's error code, e.g. 11000 (DuplicateKey). */
    val code: Int,
    /** The server's error message. */
    val message: String,
    /** `errInfo`: more about the error (e.g. a document validation failure), or an empty document. */
    val details: BsonDocument,
    /** The position of the failed write in the caller's request. */
    val index: Int,
)
