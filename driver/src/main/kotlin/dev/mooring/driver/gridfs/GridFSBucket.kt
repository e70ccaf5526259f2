package dev.mooring.driver.gridfs

import dev.mooring.driver.MongoDatabase
import dev.mooring.driver.ReadConcern
import dev.mooring.driver.internal.gridfs.DefaultGridFSBucket
import dev.mooring.sdam.ClientSession
import dev.mooring.sdam.ReadPreference
import dev.mooring.sdam.WriteConcern
import io.ktor.utils.io.ByteReadChannel
import java.io.InputStream
import kotlinx.coroutines.flow.Flow
import org.bson.BsonDocument
import org.bson.BsonValue
import org.bson.conversions.Bson

/**
 * A GridFS bucket (gridfs-spec.md): files larger than a document, stored as chunks in
 * `<bucketName>.chunks` and described by a document in `<bucketName>.files`, streamed in and out
 * as [Flow]s of bytes in bounded memory (an upload holds one chunk, a download one small batch of
 * chunks; never the file).
 *
 * Before its first write (upload) a bucket checks, on the primary, whether the files collection
 * is empty and then creates the indexes `{filename: 1, uploadDate: 1}` on files and the unique
 * `{files_id: 1, n: 1}` on chunks where `listIndexes` does not show them already (gridfs-spec.md
 * "Indexes"). Reads use [readPreference] and [readConcern], writes [writeConcern]; every
 * operation takes an optional explicit [ClientSession] like the collection API.
 *
 * **Timeouts.** [timeoutMS] (else the database's, else the cluster's) bounds each operation as a
 * whole (client-side-operations-timeout.md "GridFS API"): an upload from its index check to its
 * files document, a download from the files lookup to the last chunk (its chunk cursor in
 * `CURSOR_LIFETIME` mode). Time spent waiting on the caller's source or collector counts, but is
 * only noticed at the next command: a source that never emits, or a collector that never
 * returns, is not interrupted by the timeout.
 *
 * **Concurrency.** Thread-safe: any number of operations may run concurrently. The options are
 * immutable; the `with…` copies are new buckets (each checks the indexes before its own first
 * write). The download and find flows are cold: nothing is sent until they are collected.
 */
public interface GridFSBucket {
    /** The bucket name (the collections' prefix). */
    public val bucketName: String

    /** The chunk size of new files, in bytes. */
    public val chunkSizeBytes: Int

    /** The read preference of downloads and finds. */
    public val readPreference: ReadPreference

    /** The read concern of downloads and finds. */
    public val readConcern: ReadConcern

    /** The write concern of uploads, deletes, renames and drops. */
    public val writeConcern: WriteConcern

    /** The timeoutMS of each operation; null inherits the cluster's. */
    public val timeoutMS: Long?

    /** A copy with [chunkSizeBytes] for new files. */
    public fun withChunkSizeBytes(chunkSizeBytes: Int): GridFSBucket

    /** A copy with [readPreference]. */
    public fun withReadPreference(readPreference: ReadPreference): GridFSBucket

    /** A copy with [readConcern]. */
    public fun withReadConcern(readConcern: ReadConcern): GridFSBucket

    /** A copy with [writeConcern]. */
    public fun withWriteConcern(writeConcern: WriteConcern): GridFSBucket

    /** A copy with [timeoutMS] (0: no limit; null: the cluster's; negative: [IllegalArgumentException]). */
    public fun withTimeout(timeoutMS: Long?): GridFSBucket

    /**
     * Uploads the bytes [source] emits as the file [filename] and returns its id ([options]'s,
     * else a new ObjectId). [source] is collected once, to its end; its arrays are cut into
     * chunks of the chunk size (one `insert` each, the next array collected only after the
     * chunk before it is stored), then the files document is inserted with `length`,
     * `chunkSize`, `uploadDate` (the completion time), `filename`, and `metadata` (and the deprecated `contentType`, `aliases`) when given. An
     * empty source stores a files document of length 0 and no chunk.
     *
     * **Abort.** When [source] throws, or the caller is cancelled, the upload is aborted: the
     * chunks already stored are deleted (even under cancellation) and the source's error (or the
     * cancellation) is rethrown, a failure to delete attached to it as suppressed. When a command
     * fails instead (a server or network error, the timeout), the error is thrown as it is and the
     * chunks already stored stay (gridfs-spec.md "Operation Failure": orphans are not cleaned up).
     */
    public suspend fun upload(
        filename: String,
        source: Flow<ByteArray>,
        options: GridFSUploadOptions = GridFSUploadOptions(),
        session: ClientSession? = null,
    ): BsonValue

    /**
     * [upload] from [source], read on `Dispatchers.IO` one chunk at a time until its end; the
     * stream is not closed. A blocking read is not interrupted by the timeout or by cancellation.
     */
    public suspend fun upload(
        filename: String,
        source: InputStream,
        options: GridFSUploadOptions = GridFSUploadOptions(),
        session: ClientSession? = null,
    ): BsonValue

    /** [upload] from [source] (Ktor's channel), read until it is closed; the channel is not cancelled. */
    public suspend fun upload(
        filename: String,
        source: ByteReadChannel,
        options: GridFSUploadOptions = GridFSUploadOptions(),
        session: ClientSession? = null,
    ): BsonValue

    /**
     * The bytes of the file [id] as a cold flow of one array per chunk, in order. Collecting it
     * reads the files document ([GridFSFileNotFoundException] when there is none), then the
     * chunks sorted by `n` (no chunk query for an empty file), checking each one: a missing chunk
     * ([GridFSChunkIsMissingException], also when the chunks end early), a chunk of the wrong size
     * ([GridFSChunkIsWrongSizeException]) or a chunk beyond the file's length
     * ([GridFSExtraChunkException]) fails the flow after the chunks before it, so a download is
     * never silently short. A collector that stops early closes the cursor.
     */
    public fun download(id: BsonValue, session: ClientSession? = null): Flow<ByteArray>

    /**
     * The bytes of revision [revision] of the file named [filename] ([download]'s flow):
     * 0 the first stored, 1 the second, …; -1 the newest (the default), -2 the one before, …
     * No file of that name: [GridFSFilenameNotFoundException]; no such revision:
     * [GridFSRevisionNotFoundException].
     */
    public fun downloadByName(filename: String, revision: Int = -1, session: ClientSession? = null): Flow<ByteArray>

    /**
     * The files whose files collection documents match [filter] (a `find` on the files
     * collection with [options]), as a cold flow like [dev.mooring.driver.MongoCollection.find]'s.
     * Query the application's metadata with dotted names, for example `{"metadata.owner": "ana"}`.
     */
    public fun find(filter: Bson = BsonDocument(), options: GridFSFindOptions = GridFSFindOptions(), session: ClientSession? = null): Flow<GridFSFile>

    /**
     * Deletes the file [id]: its files document first, then its chunks. No files document:
     * the chunks with that `files_id` (orphans) are deleted all the same, then
     * [GridFSFileNotFoundException] (not detectable under an unacknowledged write concern).
     */
    public suspend fun delete(id: BsonValue, session: ClientSession? = null)

    /** Deletes every revision of [filename] (files documents, then chunks); none: [GridFSFilenameNotFoundException]. */
    public suspend fun deleteByName(filename: String, session: ClientSession? = null)

    /** Sets the filename of the file [id] to [newFilename]; no such file: [GridFSFileNotFoundException]. */
    public suspend fun rename(id: BsonValue, newFilename: String, session: ClientSession? = null)

    /** Renames every revision of [filename] to [newFilename]; none: [GridFSFilenameNotFoundException]. */
    public suspend fun renameByName(filename: String, newFilename: String, session: ClientSession? = null)

    /** Drops the files collection, then the chunks collection (a missing one is no error); the next upload checks the indexes again. */
    public suspend fun drop(session: ClientSession? = null)
}

/**
 * A [GridFSBucket] of this database (no I/O), with [options]; its null options inherit this
 * database's read preference, read concern, write concern and timeoutMS.
 */
public fun MongoDatabase.gridFSBucket(options: GridFSBucketOptions = GridFSBucketOptions()): GridFSBucket = DefaultGridFSBucket.of(this, options)
