package dev.mooring.driver

import dev.mooring.events.MooringException

/**
 * A client bulk write ([bulkWrite] on a cluster) did not fully succeed (bulk-write.md
 * `BulkWriteException`): [writeErrors] by the index of the failed model (an ordered bulk write
 * stops at the first), [writeConcernErrors] (one per `bulkWrite` command that reported one), and
 * [error] (also the [cause]), the top-level error that stopped it — a command error, a network
 * error, a timeout, a failed `getMore` — when results had been observed before it (without any,
 * that error is thrown itself). [partialResult] holds what is known to have been applied, null
 * when no write is known to have succeeded. The error labels of the replies and of [error] are
 * attached. Immutable but for its error labels, which are thread-safe.
 */
public class ClientBulkWriteException(
    /** The top-level error, or null when only write errors and write concern errors occurred. */
    public val error: Throwable?,
    /** The write concern errors, one per command that reported one. */
    public val writeConcernErrors: List<WriteConcernError>,
    /** The failed writes, by the index of their model in the request. */
    public val writeErrors: Map<Int, WriteError>,
    /** The results of the writes that succeeded, or null when none is known to have succeeded. */
    public val partialResult: ClientBulkWriteResult.Acknowledged?,
) : MooringException(describe(error, writeConcernErrors, writeErrors), error) {
    init {
        (error as? MooringException)?.errorLabels?.forEach { addErrorLabel(it) }
    }

    private companion object {
        fun describe(error: Throwable?, c: List<WriteConcernError>, w: Map<Int, WriteError>): String = buildString {
            append("client bulk write failed:")
            if (error != null) append(" ").append(error.message ?: error.toString()).append(';')
            if (w.isNotEmpty()) {
                val first = w.entries.minBy { it.key }
                append(" ").append(w.size).append(" write error(s), first at index ").append(first.key)
                    .append(" (").append(first.value.code).append(": ").append(first.value.message).append(");")
            }
            if (c.isNotEmpty()) append(" write concern error ").append(c[0].code).append(": ").append(c[0].message).append(';')
        }.removeSuffix(";")
    }
}
