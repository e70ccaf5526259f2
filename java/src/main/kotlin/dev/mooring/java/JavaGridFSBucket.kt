package dev.mooring.java

import dev.mooring.driver.gridfs.GridFSBucket
import dev.mooring.driver.gridfs.GridFSFile
import dev.mooring.driver.gridfs.GridFSFindOptions
import dev.mooring.driver.gridfs.GridFSUploadOptions
import dev.mooring.sdam.ClientSession
import dev.mooring.sdam.MongoClusterClosedException
import java.io.InputStream
import java.nio.ByteBuffer
import java.util.concurrent.CompletableFuture
import java.util.concurrent.Flow
import org.bson.BsonValue
import org.bson.conversions.Bson

/**
 * The Java face of a driver [GridFSBucket], from [JavaMongoDatabase.getGridFSBucket]: uploads from
 * a `Flow.Publisher<ByteBuffer>` or an `InputStream` as [CompletableFuture]s of the file id,
 * downloads as `Flow.Publisher<ByteBuffer>` (one buffer per chunk), and the file management of
 * the bucket. The rules (indexes, chunk checks, abort, timeouts) are [GridFSBucket]'s.
 *
 * ```java
 * JavaGridFSBucket bucket = cluster.getDatabase("media").getGridFSBucket();
 * BsonValue id = bucket.upload("clip.mp4", inputStream).join();
 * bucket.download(id).subscribe(subscriber);
 * ```
 *
 * **Concurrency.** Thread-safe: any number of operations may run concurrently, as coroutines of
 * the cluster facade's scope; futures and publishers signal on Mooring's threads (don't block in
 * their callbacks). An upload requests one buffer of its source publisher at a time, the next once
 * the one before is stored (so the upload holds about one chunk); a download publisher reads the
 * next chunks only on demand. Cancelling an upload's future, or a source publisher's `onError`,
 * aborts the upload (its chunks are deleted). Once the cluster is closed, the futures fail with
 * [MongoClusterClosedException].
 */
public interface JavaGridFSBucket {
    /** The bucket name (the collections' prefix). */
    public val bucketName: String

    /** The chunk size of new files, in bytes. */
    public val chunkSizeBytes: Int

    /** Uploads the buffers [source] publishes as the file [filename]; the future holds its id (a new ObjectId). */
    public fun upload(filename: String, source: Flow.Publisher<ByteBuffer>): CompletableFuture<BsonValue>

    /** [upload] with [options] (an id of your own, metadata, a chunk size). */
    public fun upload(filename: String, source: Flow.Publisher<ByteBuffer>, options: GridFSUploadOptions): CompletableFuture<BsonValue>

    /** [upload] with [options] in [session]. */
    public fun upload(filename: String, source: Flow.Publisher<ByteBuffer>, options: GridFSUploadOptions, session: ClientSession?): CompletableFuture<BsonValue>

    /** Uploads [source] read to its end (on an IO thread; not closed) as the file [filename]; the future holds its id. */
    public fun upload(filename: String, source: InputStream): CompletableFuture<BsonValue>

    /** [upload] from [source] with [options]. */
    public fun upload(filename: String, source: InputStream, options: GridFSUploadOptions): CompletableFuture<BsonValue>

    /** [upload] from [source] with [options] in [session]. */
    public fun upload(filename: String, source: InputStream, options: GridFSUploadOptions, session: ClientSession?): CompletableFuture<BsonValue>

    /** The bytes of the file [id], one buffer per chunk ([GridFSBucket.download]'s checks; an error ends it with `onError`). */
    public fun download(id: BsonValue): Flow.Publisher<ByteBuffer>

    /** [download] in [session]. */
    public fun download(id: BsonValue, session: ClientSession?): Flow.Publisher<ByteBuffer>

    /** The bytes of revision [revision] (0 the first, -1 the newest) of the file named [filename]. */
    public fun downloadByName(filename: String, revision: Int): Flow.Publisher<ByteBuffer>

    /** [downloadByName] in [session]. */
    public fun downloadByName(filename: String, revision: Int, session: ClientSession?): Flow.Publisher<ByteBuffer>

    /** The files matching [filter] (a query on the files collection, e.g. `{"metadata.owner": "ana"}`). */
    public fun find(filter: Bson): Flow.Publisher<GridFSFile>

    /** [find] with [options] in [session]. */
    public fun find(filter: Bson, options: GridFSFindOptions, session: ClientSession?): Flow.Publisher<GridFSFile>

    /** Deletes the file [id] (files document, then chunks). */
    public fun delete(id: BsonValue): CompletableFuture<Void?>

    /** Renames the file [id]. */
    public fun rename(id: BsonValue, newFilename: String): CompletableFuture<Void?>

    /** Drops the bucket's files and chunks collections. */
    public fun drop(): CompletableFuture<Void?>

    /** The driver bucket this facade calls (for Kotlin code). */
    public fun asGridFSBucket(): GridFSBucket
}
