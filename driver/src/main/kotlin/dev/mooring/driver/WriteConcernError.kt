package dev.mooring.driver

import org.bson.BsonDocument

/**
 * The server could not satisfy the write concern (crud.md `WriteConcernError`): a reply's
 * `writeConcernError`. The writes themselves were applied. Immutable.
 */
public data class WriteConcernError(
    /** The server's error code, e.g. 64 (WriteConcernFailed). */
    val code: Int,
    /** The server's code name, when given. */
    val codeName: String?,
    /** The server's error message. */
    val message: String,
    /** `errInfo`: more about the error, or an empty document. */
    val details: BsonDocument,
)
