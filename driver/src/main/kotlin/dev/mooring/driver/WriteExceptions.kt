package dev.mooring.driver

import dev.mooring.events.MooringException

/**
 * A single-document write (insertOne, updateOne/Many, replaceOne, deleteOne/Many) failed on the
 * server with [writeError] (crud.md `WriteException`), e.g. a duplicate key (code 11000). A
 * write concern error reported with it is [writeConcernError]. The reply's error labels are
 * attached. Immutable but for its error labels, which are thread-safe.
 */
public class MongoWriteException(
    /** The write's error. */
    public val writeError: WriteError,
    /** The write concern error reported alongside, or null. */
    public val writeConcernError: WriteConcernError?,
    /** The namespace (`db.collection`) written to. */
    public val namespace: String,
) : MooringException("write to $namespace failed with error ${writeError.code}: ${writeError.message}") {
    /** The server's error code ([WriteError.code]). */
    public val code: Int get() = writeError.code
}

/**
 * The write was applied but its write concern was not satisfied (crud.md `WriteConcernException`).
 * [result] is what the server acknowledged ([UpdateResult], [DeleteResult], [InsertOneResult]; null
 * for findOneAndX, whose document is not returned then). The reply's error labels are attached.
 * Immutable but for its error labels, which are thread-safe.
 */
public class MongoWriteConcernException(
    /** The write concern error. */
    public val writeConcernError: WriteConcernError,
    /** What the write did, as far as the reply tells; null when the operation returns a document. */
    public val result: SingleWriteResult?,
    /** The namespace (`db.collection`) written to. */
    public val namespace: String,
) : MooringException("write to $namespace: write concern error ${writeConcernError.code}: ${writeConcernError.message}") {
    /** The server's error code ([WriteConcernError.code]). */
    public val code: Int get() = writeConcernError.code
}

/**
 * A bulk write (bulkWrite, insertMany) had write errors and/or write concern errors (crud.md
 * `BulkWriteException`). [writeErrors] carry the index of the failed write in the caller's
 * request; an ordered bulk write stops at the first. [partialResult] counts what was applied
 * (acknowledged: this exception is thrown only for acknowledged writes). The error labels of
 * the replies are attached. Also the outcome of a bulk write another error interrupted, attached
 * to that error ([interruptedBulkWrite]; its lists may be empty then). Immutable but for its
 * error labels, which are thread-safe.
 */
public class MongoBulkWriteException(
    /** The failed writes, with their indexes in the request. */
    public val writeErrors: List<WriteError>,
    /** The write concern errors, one per batch that reported one. */
    public val writeConcernErrors: List<WriteConcernError>,
    /** What the batches applied. */
    public val partialResult: BulkWriteResult.Acknowledged,
    /** The namespace (`db.collection`) written to. */
    public val namespace: String,
) : MooringException(describe(writeErrors, writeConcernErrors, partialResult, namespace)) {
    private companion object {
        fun describe(w: List<WriteError>, c: List<WriteConcernError>, r: BulkWriteResult.Acknowledged, ns: String): String = buildString {
            if (w.isEmpty() && c.isEmpty()) {
                append("bulk write to ").append(ns).append(": acknowledged before the interruption: ").append(r.insertedCount).append(" inserted, ")
                    .append(r.matchedCount).append(" matched, ").append(r.modifiedCount).append(" modified, ").append(r.deletedCount).append(" deleted, ")
                    .append(r.upsertedCount).append(" upserted")
                return@buildString
            }
            append("bulk write to ").append(ns).append(" failed: ")
            if (w.isNotEmpty()) append(w.size).append(" write error(s), first at index ").append(w[0].index)
                .append(" (").append(w[0].code).append(": ").append(w[0].message).append(')')
            if (w.isNotEmpty() && c.isNotEmpty()) append("; ")
            if (c.isNotEmpty()) append("write concern error ").append(c[0].code).append(": ").append(c[0].message)
        }
    }
}
