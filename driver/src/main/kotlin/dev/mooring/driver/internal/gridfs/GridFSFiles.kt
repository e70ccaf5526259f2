package dev.mooring.driver.internal.gridfs

import dev.mooring.driver.gridfs.GridFSFile
import dev.mooring.driver.gridfs.GridFSInvalidFileException
import java.time.Instant
import org.bson.BsonDocument
import org.bson.BsonNull

/** Reads a files collection document into a [GridFSFile], whatever numeric types `length` and `chunkSize` were stored with. Stateless. */
internal object GridFSFiles {
    fun of(d: BsonDocument): GridFSFile {
        val id = d["_id"] ?: BsonNull.VALUE
        val length = d["length"]?.takeIf { it.isNumber }?.asNumber()?.longValue()
            ?: throw GridFSInvalidFileException(id, "the files document has no numeric length")
        val chunkSize = d["chunkSize"]?.takeIf { it.isNumber }?.asNumber()?.intValue()
            ?: throw GridFSInvalidFileException(id, "the files document has no numeric chunkSize")
        return GridFSFile(
            id = id,
            filename = d["filename"]?.takeIf { it.isString }?.asString()?.value,
            length = length,
            chunkSize = chunkSize,
            uploadDate = d["uploadDate"]?.takeIf { it.isDateTime }?.asDateTime()?.value?.let(Instant::ofEpochMilli),
            metadata = d["metadata"]?.takeIf { it.isDocument }?.asDocument(),
            document = d,
        )
    }
}
