package dev.mooring.driver.gridfs

import dev.mooring.events.MooringException
import org.bson.BsonValue

/**
 * A GridFS operation found the stored file missing or inconsistent (the errors gridfs-spec.md
 * names). A client-side error: no server reply is behind it. Immutable but for its error labels,
 * which are thread-safe.
 */
public sealed class MongoGridFSException(message: String) : MooringException(message)

/** No files collection document has the id [id] (download, delete, rename). */
public class GridFSFileNotFoundException(
    /** The id asked for. */
    public val id: BsonValue,
) : MongoGridFSException("no GridFS file with id $id")

/** No file has the name [filename] (downloadByName, deleteByName, renameByName). */
public class GridFSFilenameNotFoundException(
    /** The name asked for. */
    public val filename: String,
) : MongoGridFSException("no GridFS file named '$filename'")

/** Files named [filename] exist, but not the [revision] asked for (downloadByName). */
public class GridFSRevisionNotFoundException(
    /** The name asked for. */
    public val filename: String,
    /** The revision asked for (0 the first, -1 the newest). */
    public val revision: Int,
) : MongoGridFSException("GridFS file '$filename' has no revision $revision")

/** The chunk [expectedN] of file [fileId] is missing: the download stopped there, never silently short. */
public class GridFSChunkIsMissingException(
    /** The file id. */
    public val fileId: BsonValue,
    /** The chunk number expected next. */
    public val expectedN: Int,
    /** The chunk number found instead, or null when the chunks ended. */
    public val foundN: Int?,
) : MongoGridFSException(
    "GridFS file $fileId: chunk $expectedN is missing" + (foundN?.let { " (chunk $it came next)" } ?: " (no more chunks)"),
)

/** The chunk [n] of file [fileId] holds [actualSize] bytes where the file's length and chunk size imply [expectedSize]. */
public class GridFSChunkIsWrongSizeException(
    /** The file id. */
    public val fileId: BsonValue,
    /** The chunk number. */
    public val n: Int,
    /** The size the files document implies. */
    public val expectedSize: Int,
    /** The size found (-1: the `data` field is no binary). */
    public val actualSize: Int,
) : MongoGridFSException("GridFS file $fileId: chunk $n holds $actualSize bytes, expected $expectedSize")

/** File [fileId] has a chunk [n] beyond the [expectedCount] its length and chunk size imply. */
public class GridFSExtraChunkException(
    /** The file id. */
    public val fileId: BsonValue,
    /** The extra chunk's number. */
    public val n: Int,
    /** The number of chunks the files document implies. */
    public val expectedCount: Int,
) : MongoGridFSException("GridFS file $fileId: extra chunk $n (the file has $expectedCount chunks)")

/** The files collection document of [fileId] lacks a valid `length` or `chunkSize`, so its chunks cannot be checked. */
public class GridFSInvalidFileException(
    /** The file id. */
    public val fileId: BsonValue,
    /** What is wrong. */
    public val reason: String,
) : MongoGridFSException("GridFS file $fileId: $reason")
