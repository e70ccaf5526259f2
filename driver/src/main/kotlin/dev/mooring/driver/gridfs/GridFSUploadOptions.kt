package dev.mooring.driver.gridfs

import org.bson.BsonDocument
import org.bson.BsonValue

/**
 * The options of one upload (gridfs-spec.md `GridFSUploadOptions`). Immutable but for [metadata]
 * (a [BsonDocument], which the caller must not change while the upload runs).
 */
public data class GridFSUploadOptions @JvmOverloads constructor(
    /** The file id (any BSON value but an array); null: the driver generates an ObjectId. */
    val id: BsonValue? = null,
    /** The files collection document's `metadata`; null leaves the field out. */
    val metadata: BsonDocument? = null,
    /** The chunk size of this file, in bytes; null: the bucket's. */
    val chunkSizeBytes: Int? = null,
    /** The files document's root-level `contentType`; null leaves it out. */
    @Deprecated("gridfs-spec.md deprecates the root-level contentType: add a contentType field to metadata instead")
    val contentType: String? = null,
    /** The files document's root-level `aliases`; null leaves them out. */
    @Deprecated("gridfs-spec.md deprecates the root-level aliases: add an aliases field to metadata instead")
    val aliases: List<String>? = null,
) {
    init {
        require(chunkSizeBytes == null || chunkSizeBytes > 0) { "chunkSizeBytes must be positive, got $chunkSizeBytes" }
        require(id == null || !id.isArray) { "a file id must not be an array" }
    }
}
