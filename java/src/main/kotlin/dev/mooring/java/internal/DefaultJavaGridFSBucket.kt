package dev.mooring.java.internal

import dev.mooring.driver.gridfs.GridFSBucket
import dev.mooring.driver.gridfs.GridFSFile
import dev.mooring.driver.gridfs.GridFSFindOptions
import dev.mooring.driver.gridfs.GridFSUploadOptions
import dev.mooring.java.JavaGridFSBucket
import dev.mooring.sdam.ClientSession
import java.io.InputStream
import java.nio.ByteBuffer
import java.util.concurrent.CompletableFuture
import java.util.concurrent.Flow
import kotlinx.coroutines.flow.map
import org.bson.BsonValue
import org.bson.conversions.Bson

/** [JavaGridFSBucket] over the driver's [bucket], its operations on [facade]'s scope. Immutable. */
internal class DefaultJavaGridFSBucket(
    private val facade: DefaultJavaMongoCluster,
    private val bucket: GridFSBucket,
) : JavaGridFSBucket {
    override val bucketName: String get() = bucket.bucketName
    override val chunkSizeBytes: Int get() = bucket.chunkSizeBytes

    override fun upload(filename: String, source: Flow.Publisher<ByteBuffer>): CompletableFuture<BsonValue> =
        upload(filename, source, GridFSUploadOptions(), null)

    override fun upload(filename: String, source: Flow.Publisher<ByteBuffer>, options: GridFSUploadOptions): CompletableFuture<BsonValue> =
        upload(filename, source, options, null)

    override fun upload(filename: String, source: Flow.Publisher<ByteBuffer>, options: GridFSUploadOptions, session: ClientSession?): CompletableFuture<BsonValue> =
        facade.future { bucket.upload(filename, PublisherFlow.of(source).map(::bytes), options, session) }

    override fun upload(filename: String, source: InputStream): CompletableFuture<BsonValue> = upload(filename, source, GridFSUploadOptions(), null)

    override fun upload(filename: String, source: InputStream, options: GridFSUploadOptions): CompletableFuture<BsonValue> =
        upload(filename, source, options, null)

    override fun upload(filename: String, source: InputStream, options: GridFSUploadOptions, session: ClientSession?): CompletableFuture<BsonValue> =
        facade.future { bucket.upload(filename, source, options, session) }

    override fun download(id: BsonValue): Flow.Publisher<ByteBuffer> = download(id, null)

    override fun download(id: BsonValue, session: ClientSession?): Flow.Publisher<ByteBuffer> =
        facade.publisher(bucket.download(id, session).map { ByteBuffer.wrap(it) })

    override fun downloadByName(filename: String, revision: Int): Flow.Publisher<ByteBuffer> = downloadByName(filename, revision, null)

    override fun downloadByName(filename: String, revision: Int, session: ClientSession?): Flow.Publisher<ByteBuffer> =
        facade.publisher(bucket.downloadByName(filename, revision, session).map { ByteBuffer.wrap(it) })

    override fun find(filter: Bson): Flow.Publisher<GridFSFile> = find(filter, GridFSFindOptions(), null)

    override fun find(filter: Bson, options: GridFSFindOptions, session: ClientSession?): Flow.Publisher<GridFSFile> =
        facade.publisher(bucket.find(filter, options, session))

    override fun delete(id: BsonValue): CompletableFuture<Void?> = facade.future {
        bucket.delete(id)
        null
    }

    override fun rename(id: BsonValue, newFilename: String): CompletableFuture<Void?> = facade.future {
        bucket.rename(id, newFilename)
        null
    }

    override fun drop(): CompletableFuture<Void?> = facade.future {
        bucket.drop()
        null
    }

    override fun asGridFSBucket(): GridFSBucket = bucket

    override fun toString(): String = "JavaGridFSBucket($bucketName)"

    private companion object {
        /** The buffer's remaining bytes (its position is not moved). */
        fun bytes(b: ByteBuffer): ByteArray = ByteArray(b.remaining()).also { b.duplicate().get(it) }
    }
}
