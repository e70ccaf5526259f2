package dev.mooring.driver.gridfs

import java.time.Instant
import org.bson.BsonDocument
import org.bson.BsonValue

/**
 * One stored file: its files collection document (gridfs-spec.md "Files collection document"),
 * read from the fields GridFS uses. [document] is the whole document as stored, with any
 * deprecated (`md5`, `contentType`, `aliases`) or legacy root-level fields. Immutable as long as
 * [document] and [metadata] are not changed by the caller; safe to share between threads then.
 */
public data class GridFSFile(
    /** The file id (`_id`). */
    val id: BsonValue,
    /** The file name; null for a legacy file stored without one. */
    val filename: String?,
    /** The length in bytes. */
    val length: Long,
    /** The size of every chunk but the last, in bytes. */
    val chunkSize: Int,
    /** When the upload completed; null for a legacy file without an `uploadDate`. */
    val uploadDate: Instant?,
    /** The application's `metadata` document, or null. */
    val metadata: BsonDocument?,
    /** The files collection document as stored. */
    val document: BsonDocument,
)
