package dev.mooring.driver.gridfs

import dev.mooring.driver.MongoDatabase
import dev.mooring.driver.ReadConcern
import dev.mooring.sdam.ReadPreference
import dev.mooring.sdam.WriteConcern

/**
 * The options of a [GridFSBucket] (gridfs-spec.md `GridFSBucketOptions`). A null read preference,
 * read concern, write concern or timeoutMS inherits the [MongoDatabase]'s. There is no
 * `disableMD5`: Mooring never computes the deprecated `md5` field (gridfs-spec.md: a driver without
 * MD5 support "MUST NOT provide the 'disableMD5' member"). Immutable; safe to share between threads.
 */
public data class GridFSBucketOptions @JvmOverloads constructor(
    /** The prefix of the bucket's collections (`<bucketName>.files`, `<bucketName>.chunks`). */
    val bucketName: String = "fs",
    /** The chunk size of new files, in bytes (255 KiB unless given). */
    val chunkSizeBytes: Int = DEFAULT_CHUNK_SIZE_BYTES,
    /** The read preference of downloads and finds; null: the database's. */
    val readPreference: ReadPreference? = null,
    /** The read concern of downloads and finds; null: the database's. */
    val readConcern: ReadConcern? = null,
    /** The write concern of uploads, deletes, renames and drops; null: the database's. */
    val writeConcern: WriteConcern? = null,
    /**
     * The timeoutMS of each bucket operation, bounding an upload or a download as a whole
     * (client-side-operations-timeout.md "GridFS API"); 0: no limit; null: the database's.
     */
    val timeoutMS: Long? = null,
) {
    init {
        require(bucketName.isNotEmpty()) { "a bucket name must not be empty" }
        require(chunkSizeBytes > 0) { "chunkSizeBytes must be positive, got $chunkSizeBytes" }
        require(timeoutMS == null || timeoutMS >= 0) { "timeoutMS must not be negative, got $timeoutMS" }
    }

    public companion object {
        /** 255 KiB: gridfs-spec.md's default chunk size. */
        public const val DEFAULT_CHUNK_SIZE_BYTES: Int = 255 * 1024
    }
}
