package dev.mooring.cmap.internal.wire

import org.bson.BsonDocument
import org.bson.io.BasicOutputBuffer

/** A legacy OP_REPLY, the answer to an OP_QUERY. Immutable as long as callers do not mutate the documents. */
internal data class OpReply(
    val requestId: Int,
    val responseTo: Int,
    val responseFlags: Int,
    val cursorId: Long,
    val startingFrom: Int,
    val documents: List<BsonDocument>,
) {
    /** responseFlags bit 1: the query failed and the single document is an `$err` document. */
    internal val queryFailure: Boolean get() = responseFlags and QUERY_FAILURE != 0

    internal companion object {
        /** responseFlags bit 0. */
        internal const val CURSOR_NOT_FOUND: Int = 1

        /** responseFlags bit 1. */
        internal const val QUERY_FAILURE: Int = 2

        /** responseFlags bit 3: always set by servers since 1.6. */
        internal const val AWAIT_CAPABLE: Int = 8

        /** Encodes [r]; size checks as for OP_MSG. */
        internal fun encode(r: OpReply, limits: MessageLimits = MessageLimits.DEFAULT): ByteArray {
            val out = BasicOutputBuffer()
            BsonWriting.writeHeader(out, r.requestId, r.responseTo, OpCode.OP_REPLY)
            out.writeInt32(r.responseFlags)
            out.writeInt64(r.cursorId)
            out.writeInt32(r.startingFrom)
            out.writeInt32(r.documents.size)
            for (d in r.documents) BsonWriting.writeDocument(out, d, limits.maxBsonObjectSize + MessageLimits.COMMAND_OVERHEAD, "reply document")
            return BsonWriting.finish(out, limits.maxMessageSizeBytes)
        }

        /**
         * Decodes the part after [header]. The document count must equal numberReturned (which is
         * never used to size an allocation). Throws [WireFormatException] only.
         */
        internal fun decode(header: MessageHeader, body: ByteArray): OpReply {
            if (header.opCode != OpCode.OP_REPLY) throw WireFormatException("expected OP_REPLY (1), got opCode ${header.opCode}")
            val r = ByteReader(body)
            val flags = r.int32("responseFlags")
            val cursorId = r.int64("cursorID")
            val from = r.int32("startingFrom")
            val n = r.int32("numberReturned")
            if (n < 0) throw WireFormatException("negative numberReturned $n")
            val docs = ArrayList<BsonDocument>()
            while (r.remaining > 0) docs.add(r.document("OP_REPLY document"))
            if (docs.size != n) throw WireFormatException("OP_REPLY numberReturned is $n but it holds ${docs.size} documents")
            return OpReply(header.requestId, header.responseTo, flags, cursorId, from, docs)
        }
    }
}
