package dev.mooring.driver.internal

import org.bson.BsonArray
import org.bson.BsonDocument

/**
 * One `bulkWrite` command's share of a client bulk write: its [ops] (in the caller's order) and
 * the namespaces they use ([namespaces], each once, in first-use order: the command's nsInfo).
 * Immutable.
 */
internal class ClientBulkWriteBatch(val ops: List<ClientWriteOp>, val namespaces: List<String>) {
    /** True when an op writes many documents: the command is then not a retryable write (retryable-writes.md). */
    val multi: Boolean get() = ops.any { it.multi }

    /** [base] (the command with its options) with this batch's `ops` and `nsInfo`. */
    fun command(base: BsonDocument): BsonDocument {
        val nsIndex = namespaces.withIndex().associate { (i, ns) -> ns to i }
        val cmd = BsonDocument()
        cmd.putAll(base)
        cmd["ops"] = BsonArray(ops.map { it.document(nsIndex.getValue(it.namespace)) })
        cmd["nsInfo"] = BsonArray(namespaces.map { ClientWriteOps.nsInfo(it) })
        return cmd
    }
}

/**
 * Splits a client bulk write into commands (bulk-write.md "Command Batching"): at most
 * `maxWriteBatchSize` ops per command, and the command document (its options, `ops` and the
 * `nsInfo` of only the namespaces its ops use) within `maxMessageSizeBytes - 1000` bytes — and,
 * as Mooring sends `ops` and `nsInfo` in the command body rather than as OP_MSG document
 * sequences, within `maxBsonObjectSize` too. An op that does not fit in a command of its own is an
 * [IllegalArgumentException] (nothing is sent). Stateless.
 */
internal object ClientBulkWriteBatches {
    /** bulk-write.md: the room an OP_MSG needs besides the command's own fields (header, lsid, txnNumber, ...). */
    const val MESSAGE_OVERHEAD_BYTES = 1000

    /** Per array element: the type byte, the index as a key (at most 7 digits) and its NUL. */
    private const val ELEMENT_OVERHEAD = 1 + 7 + 1

    /** Per array field (`ops`, `nsInfo`): the type byte, the name and its NUL, the array's length and terminator. */
    private const val ARRAY_FIELD_OVERHEAD = 1 + 6 + 1 + 4 + 1

    fun split(ops: List<ClientWriteOp>, base: BsonDocument, limits: ServerLimits): List<ClientBulkWriteBatch> {
        val baseSize = BsonSizes.document(base)
        val room = minOf(limits.maxBsonObjectSize, limits.maxMessageSizeBytes - MESSAGE_OVERHEAD_BYTES) - baseSize - 2 * ARRAY_FIELD_OVERHEAD
        val nsSize = HashMap<String, Int>()
        val out = ArrayList<ClientBulkWriteBatch>()
        var current = ArrayList<ClientWriteOp>()
        var namespaces = LinkedHashSet<String>()
        var bytes = 0
        fun added(op: ClientWriteOp): Int {
            val ns = if (op.namespace in namespaces) 0 else ELEMENT_OVERHEAD + nsSize.getOrPut(op.namespace) { BsonSizes.document(ClientWriteOps.nsInfo(op.namespace)) }
            return op.size + ELEMENT_OVERHEAD + ns
        }
        for (op in ops) {
            var size = added(op)
            if (current.isNotEmpty() && (current.size >= limits.maxWriteBatchSize || bytes + size > room)) {
                out += ClientBulkWriteBatch(current, namespaces.toList())
                current = ArrayList()
                namespaces = LinkedHashSet()
                bytes = 0
                size = added(op)
            }
            require(size <= room) {
                "the write at index ${op.index} (${op.size} bytes) does not fit in a bulkWrite command (room for $room bytes of ops and nsInfo: " +
                    "maxBsonObjectSize ${limits.maxBsonObjectSize}, maxMessageSizeBytes ${limits.maxMessageSizeBytes})"
            }
            current += op
            namespaces += op.namespace
            bytes += size
        }
        if (current.isNotEmpty()) out += ClientBulkWriteBatch(current, namespaces.toList())
        return out
    }
}
