package dev.mooring.driver.internal.gridfs

import dev.mooring.driver.internal.MultiCommandDeadline
import dev.mooring.sdam.ClientSession
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.withContext
import dev.mooring.driver.gridfs.GridFSUploadOptions
import org.bson.BsonArray
import org.bson.BsonBinary
import org.bson.BsonDateTime
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonInt64
import org.bson.BsonObjectId
import org.bson.BsonString
import org.bson.BsonValue

/**
 * One upload (gridfs-spec.md "File Upload"): [source]'s bytes cut into [chunkSize] chunks, each
 * inserted before the next array is collected (one chunk buffered), then the files document.
 * A source error or a cancellation aborts it (the chunks stored are deleted, gridfs-spec.md
 * "Aborting an upload"); a failed command does not ("Operation Failure": no clean-up). Confined
 * to the uploading coroutine.
 */
internal class GridFSUpload(
    private val collections: GridFSCollections,
    private val deadline: MultiCommandDeadline,
    private val id: BsonValue,
    private val chunkSize: Int,
    private val session: ClientSession?,
) {
    private val buffer = ByteArray(chunkSize)
    private var filled = 0
    private var n = 0
    private var length = 0L
    /**
     * A command failed: its error is thrown as it is, without abort. A flag, not the error's
     * identity: coroutines' stack-trace recovery may rethrow a copy of it.
     */
    private var commandFailed = false
    private var filesDocumentSent = false

    suspend fun run(filename: String, options: GridFSUploadOptions, source: Flow<ByteArray>) {
        try {
            source.collect { bytes -> append(bytes) }
            if (filled > 0) store(buffer.copyOf(filled))
            val file = BsonDocument("_id", id)
                .append("length", BsonInt64(length))
                .append("chunkSize", BsonInt32(chunkSize))
                .append("uploadDate", BsonDateTime(System.currentTimeMillis()))
                .append("filename", BsonString(filename))
            @Suppress("DEPRECATION")
            options.contentType?.let { file.append("contentType", BsonString(it)) }
            @Suppress("DEPRECATION")
            options.aliases?.let { a -> file.append("aliases", BsonArray(a.map { BsonString(it) })) }
            options.metadata?.let { file.append("metadata", it) }
            filesDocumentSent = true
            command { collections.files(deadline).insertOne(file, session = session) }
        } catch (e: Throwable) {
            if (e is CancellationException || !commandFailed) abort(e)
            throw e
        }
    }

    private suspend fun append(bytes: ByteArray) {
        var offset = 0
        while (offset < bytes.size) {
            val take = minOf(chunkSize - filled, bytes.size - offset)
            System.arraycopy(bytes, offset, buffer, filled, take)
            filled += take
            offset += take
            length += take
            if (filled == chunkSize) {
                store(buffer.copyOf())
                filled = 0
            }
        }
    }

    private suspend fun store(data: ByteArray) {
        val chunk = BsonDocument("_id", BsonObjectId()).append("files_id", id).append("n", BsonInt32(n)).append("data", BsonBinary(data))
        command { collections.chunks(deadline).insertOne(chunk, session = session) }
        n++
    }

    private suspend fun command(block: suspend () -> Unit) {
        try {
            block()
        } catch (e: Throwable) {
            commandFailed = true
            throw e
        }
    }

    /** Deletes what this upload stored (the files document too when cancelled while it was sent); a failure is attached to [cause]. */
    private suspend fun abort(cause: Throwable) {
        withContext(NonCancellable) {
            try {
                val filter = BsonDocument("files_id", id)
                if (filesDocumentSent) collections.files(deadline).deleteOne(BsonDocument("_id", id), session = session)
                // a chunk whose insert was cut short by the cancellation may be stored: delete by files_id whatever n is
                if (n > 0 || cause is CancellationException) collections.chunks(deadline).deleteMany(filter, session = session)
            } catch (e: Throwable) {
                if (e !== cause) cause.addSuppressed(e)
            }
        }
    }
}
