package dev.mooring.driver.internal.gridfs

import dev.mooring.driver.FindOptions
import dev.mooring.driver.gridfs.GridFSChunkIsMissingException
import dev.mooring.driver.gridfs.GridFSChunkIsWrongSizeException
import dev.mooring.driver.gridfs.GridFSExtraChunkException
import dev.mooring.driver.gridfs.GridFSFile
import dev.mooring.driver.gridfs.GridFSInvalidFileException
import dev.mooring.driver.internal.MultiCommandDeadline
import dev.mooring.sdam.ClientSession
import dev.mooring.sdam.TimeoutMode
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.FlowCollector
import org.bson.BsonDocument
import org.bson.BsonInt32

/**
 * The chunks of one file (gridfs-spec.md "File Download"): a cursor over `{files_id}` sorted by
 * `n`, each chunk checked against the number and size the files document implies before its bytes
 * are emitted. The cursor's batches hold [batchSize] chunks, so memory stays at a few chunks
 * whatever the file's length. Stateless apart from the download in progress, which is confined
 * to its collector.
 */
internal object GridFSDownload {
    /** Chunks per batch: a few chunks, and no more than about [BATCH_BYTES] of small ones. */
    fun batchSize(chunkSize: Int): Int = (BATCH_BYTES / chunkSize).coerceIn(MIN_BATCH_CHUNKS, MAX_BATCH_CHUNKS)

    private const val BATCH_BYTES = 1024 * 1024
    private const val MIN_BATCH_CHUNKS = 4
    private const val MAX_BATCH_CHUNKS = 1024

    suspend fun emitChunks(
        out: FlowCollector<ByteArray>,
        collections: GridFSCollections,
        file: GridFSFile,
        deadline: MultiCommandDeadline,
        session: ClientSession?,
    ) {
        // a zero-length file has no chunk to read (gridfs-spec.md: no query on the chunks collection)
        if (file.length == 0L) return
        val count = chunkCount(file)
        val lastSize = (file.length - (count - 1).toLong() * file.chunkSize).toInt()
        var expected = 0
        val options = FindOptions(
            sort = BsonDocument("n", BsonInt32(1)),
            batchSize = batchSize(file.chunkSize),
            timeoutMode = TimeoutMode.CURSOR_LIFETIME.takeIf { deadline.timeoutMS != null },
        )
        val chunks: Flow<BsonDocument> = collections.chunks(deadline).find(BsonDocument("files_id", file.id), options, session)
        chunks.collect { chunk ->
            val n = chunk["n"]?.takeIf { it.isNumber }?.asNumber()?.intValue()
            if (expected >= count) throw GridFSExtraChunkException(file.id, n ?: -1, count)
            if (n != expected) throw GridFSChunkIsMissingException(file.id, expected, n)
            val data = chunk["data"]?.takeIf { it.isBinary }?.asBinary()?.data
            val size = if (expected == count - 1) lastSize else file.chunkSize
            if (data == null || data.size != size) throw GridFSChunkIsWrongSizeException(file.id, expected, size, data?.size ?: -1)
            expected++
            out.emit(data)
        }
        if (expected < count) throw GridFSChunkIsMissingException(file.id, expected, null)
    }

    private fun chunkCount(file: GridFSFile): Int {
        if (file.length < 0) throw GridFSInvalidFileException(file.id, "negative length ${file.length}")
        if (file.chunkSize <= 0) throw GridFSInvalidFileException(file.id, "chunkSize ${file.chunkSize} is not positive")
        val count = (file.length + file.chunkSize - 1) / file.chunkSize
        if (count > Int.MAX_VALUE) throw GridFSInvalidFileException(file.id, "length ${file.length} needs more than ${Int.MAX_VALUE} chunks")
        return count.toInt()
    }
}
