package dev.mooring.bench.workload

import org.bson.BsonDocument

/**
 * One write model of a bulk-write task, library-neutral (benchmarking.md's insert, replace with an
 * empty filter, delete with an empty filter) on the `perftest` collection [collection]. Each
 * library turns the list into its own models before the timed phase ([DocumentTaskOps]).
 */
sealed interface BulkOp {
    val collection: String

    /** An insert model; the `_id` is left to the library. */
    data class Insert(override val collection: String, val document: BsonDocument) : BulkOp

    /** A replace model: the empty filter, [replacement] a copy of the document. */
    data class Replace(override val collection: String, val replacement: BsonDocument) : BulkOp

    /** A delete(One) model with the empty filter. */
    data class Delete(override val collection: String) : BulkOp

    companion object {
        /**
         * [task]'s models over [document]: an insert per copy, or (mixed tasks) an insert, a replace and a delete per
         * copy, copy i on `task.collections[i % size]`. With [copies] every model gets its own copy of [document]
         * (for libraries that add the generated `_id` to the caller's document). [count] copies: the task's own unless a
         * plan scales it down.
         */
        fun of(task: WorkloadTask, document: BsonDocument, copies: Boolean, count: Int = task.operations): List<BulkOp> {
            val names = task.collections
            fun doc() = if (copies) document.clone() else document
            return buildList(if (task.isMixed) count * 3 else count) {
                for (i in 0 until count) {
                    val ns = names[i % names.size]
                    add(Insert(ns, doc()))
                    if (task.isMixed) {
                        add(Replace(ns, doc()))
                        add(Delete(ns))
                    }
                }
            }
        }

        /** The writes the server acknowledges for [ops] (inserted + matched + deleted) when each replace and delete finds the document its insert wrote. */
        fun expectedAcknowledged(ops: List<BulkOp>): Long = ops.size.toLong()
    }
}

/** A library's write models for one bulk-write iteration, built before the timed phase. */
fun interface PreparedBulkWrite {
    /** Runs the models as one ordered bulk write; returns inserted + matched + deleted as the library's result reports them. */
    suspend fun execute(): Long
}
