package dev.mooring.driver.internal.gridfs

import dev.mooring.driver.DeleteResult
import dev.mooring.driver.FindOptions
import dev.mooring.driver.MongoDatabase
import dev.mooring.driver.ReadConcern
import dev.mooring.driver.Update
import dev.mooring.driver.UpdateResult
import dev.mooring.driver.gridfs.GridFSBucket
import dev.mooring.driver.gridfs.GridFSBucketOptions
import dev.mooring.driver.gridfs.GridFSFile
import dev.mooring.driver.gridfs.GridFSFileNotFoundException
import dev.mooring.driver.gridfs.GridFSFilenameNotFoundException
import dev.mooring.driver.gridfs.GridFSFindOptions
import dev.mooring.driver.gridfs.GridFSRevisionNotFoundException
import dev.mooring.driver.gridfs.GridFSUploadOptions
import dev.mooring.driver.internal.MultiCommandDeadline
import dev.mooring.sdam.ClientSession
import dev.mooring.sdam.ReadPreference
import dev.mooring.sdam.TimeoutMode
import dev.mooring.sdam.WriteConcern
import io.ktor.utils.io.ByteReadChannel
import java.io.InputStream
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.firstOrNull
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.flow.map
import kotlinx.coroutines.flow.toList
import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonObjectId
import org.bson.BsonString
import org.bson.BsonValue
import org.bson.conversions.Bson

/** [GridFSBucket] over the public collection API of its database. Immutable but for the index check's flag ([GridFSIndexes]). */
internal class DefaultGridFSBucket private constructor(
    private val collections: GridFSCollections,
    override val chunkSizeBytes: Int,
) : GridFSBucket {
    private val indexes = GridFSIndexes(collections)

    override val bucketName: String get() = collections.bucketName
    override val readPreference: ReadPreference get() = collections.readPreference
    override val readConcern: ReadConcern get() = collections.readConcern
    override val writeConcern: WriteConcern get() = collections.writeConcern
    override val timeoutMS: Long? get() = collections.timeoutMS

    override fun withChunkSizeBytes(chunkSizeBytes: Int): GridFSBucket {
        require(chunkSizeBytes > 0) { "chunkSizeBytes must be positive, got $chunkSizeBytes" }
        return DefaultGridFSBucket(collections, chunkSizeBytes)
    }

    override fun withReadPreference(readPreference: ReadPreference): GridFSBucket = copy(collections.copy(readPreference = readPreference))

    override fun withReadConcern(readConcern: ReadConcern): GridFSBucket = copy(collections.copy(readConcern = readConcern))

    override fun withWriteConcern(writeConcern: WriteConcern): GridFSBucket = copy(collections.copy(writeConcern = writeConcern))

    override fun withTimeout(timeoutMS: Long?): GridFSBucket {
        require(timeoutMS == null || timeoutMS >= 0) { "timeoutMS must not be negative, got $timeoutMS" }
        return copy(collections.copy(timeoutMS = timeoutMS))
    }

    private fun copy(c: GridFSCollections) = DefaultGridFSBucket(c, chunkSizeBytes)

    // ---- upload

    override suspend fun upload(filename: String, source: Flow<ByteArray>, options: GridFSUploadOptions, session: ClientSession?): BsonValue {
        val deadline = collections.deadline()
        val id = options.id ?: BsonObjectId()
        indexes.ensure(deadline, session)
        GridFSUpload(collections, deadline, id, options.chunkSizeBytes ?: chunkSizeBytes, session).run(filename, options, source)
        return id
    }

    override suspend fun upload(filename: String, source: InputStream, options: GridFSUploadOptions, session: ClientSession?): BsonValue =
        upload(filename, GridFSSources.of(source, options.chunkSizeBytes ?: chunkSizeBytes), options, session)

    override suspend fun upload(filename: String, source: ByteReadChannel, options: GridFSUploadOptions, session: ClientSession?): BsonValue =
        upload(filename, GridFSSources.of(source, options.chunkSizeBytes ?: chunkSizeBytes), options, session)

    // ---- download

    override fun download(id: BsonValue, session: ClientSession?): Flow<ByteArray> = flow {
        val deadline = collections.deadline()
        val document = collections.files(deadline).find(BsonDocument("_id", id), FindOptions(limit = 1), session).firstOrNull()
            ?: throw GridFSFileNotFoundException(id)
        GridFSDownload.emitChunks(this, collections, GridFSFiles.of(document), deadline, session)
    }

    override fun downloadByName(filename: String, revision: Int, session: ClientSession?): Flow<ByteArray> = flow {
        val deadline = collections.deadline()
        val byName = BsonDocument("filename", BsonString(filename))
        // gridfs-spec.md: negative revisions count from the newest (sort descending, skip -revision - 1)
        val sort = BsonDocument("uploadDate", BsonInt32(if (revision < 0) -1 else 1))
        val skip = if (revision < 0) -revision - 1 else revision
        val document = collections.files(deadline).find(byName, FindOptions(sort = sort, skip = skip, limit = 1), session).firstOrNull()
        if (document == null) {
            val any = revision != 0 && revision != -1 &&
                collections.files(deadline).find(byName, FindOptions(projection = ID_ONLY, limit = 1), session).firstOrNull() != null
            throw if (any) GridFSRevisionNotFoundException(filename, revision) else GridFSFilenameNotFoundException(filename)
        }
        GridFSDownload.emitChunks(this, collections, GridFSFiles.of(document), deadline, session)
    }

    // ---- files

    override fun find(filter: Bson, options: GridFSFindOptions, session: ClientSession?): Flow<GridFSFile> = flow {
        val deadline = collections.deadline()
        val find = FindOptions(
            allowDiskUse = options.allowDiskUse,
            batchSize = options.batchSize,
            limit = options.limit,
            maxTimeMS = options.maxTimeMS,
            noCursorTimeout = options.noCursorTimeout,
            skip = options.skip,
            sort = options.sort,
            timeoutMode = TimeoutMode.CURSOR_LIFETIME.takeIf { deadline.timeoutMS != null },
        )
        collections.files(deadline).find(filter, find, session).collect { emit(GridFSFiles.of(it)) }
    }

    override suspend fun delete(id: BsonValue, session: ClientSession?) {
        val deadline = collections.deadline()
        // files document first, then the chunks (gridfs-spec.md "File Deletion"); orphans go too
        val deleted = collections.files(deadline).deleteOne(BsonDocument("_id", id), session = session)
        collections.chunks(deadline).deleteMany(BsonDocument("files_id", id), session = session)
        if (deleted is DeleteResult.Acknowledged && deleted.deletedCount == 0L) throw GridFSFileNotFoundException(id)
    }

    override suspend fun deleteByName(filename: String, session: ClientSession?) {
        val deadline = collections.deadline()
        val ids = collections.files(deadline).find(BsonDocument("filename", BsonString(filename)), FindOptions(projection = ID_ONLY), session)
            .map { it["_id"]!! }.toList()
        if (ids.isEmpty()) throw GridFSFilenameNotFoundException(filename)
        val inIds = BsonDocument("\$in", BsonArray(ids))
        collections.files(deadline).deleteMany(BsonDocument("_id", inIds), session = session)
        collections.chunks(deadline).deleteMany(BsonDocument("files_id", inIds), session = session)
    }

    override suspend fun rename(id: BsonValue, newFilename: String, session: ClientSession?) {
        val result = collections.files(collections.deadline()).updateOne(BsonDocument("_id", id), setFilename(newFilename), session = session)
        if (result is UpdateResult.Acknowledged && result.matchedCount == 0L) throw GridFSFileNotFoundException(id)
    }

    override suspend fun renameByName(filename: String, newFilename: String, session: ClientSession?) {
        val byName = BsonDocument("filename", BsonString(filename))
        val result = collections.files(collections.deadline()).updateMany(byName, setFilename(newFilename), session = session)
        if (result is UpdateResult.Acknowledged && result.matchedCount == 0L) throw GridFSFilenameNotFoundException(filename)
    }

    override suspend fun drop(session: ClientSession?) {
        val deadline = collections.deadline()
        collections.files(deadline).drop(session)
        collections.chunks(deadline).drop(session)
        indexes.reset()
    }

    private fun setFilename(name: String) = Update.Operators(BsonDocument("\$set", BsonDocument("filename", BsonString(name))))

    override fun toString(): String = "GridFSBucket($bucketName)"

    companion object {
        private val ID_ONLY = BsonDocument("_id", BsonInt32(1))

        fun of(database: MongoDatabase, o: GridFSBucketOptions): GridFSBucket = DefaultGridFSBucket(
            GridFSCollections(
                database,
                o.bucketName,
                o.readPreference ?: database.readPreference,
                o.readConcern ?: database.readConcern,
                o.writeConcern ?: database.writeConcern,
                o.timeoutMS,
            ),
            o.chunkSizeBytes,
        )
    }
}
