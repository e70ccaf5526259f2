package dev.mooring.cmap.internal.wire

import org.bson.BsonDocument
import org.bson.io.BasicOutputBuffer

/**
 * A legacy OP_QUERY, used only for the legacy hello (`isMaster`) on `admin.$cmd`. Immutable as
 * long as callers do not mutate the documents.
 */
internal data class OpQuery(
    val requestId: Int,
    val flags: Int,
    val fullCollectionName: String,
    val numberToSkip: Int,
    val numberToReturn: Int,
    val query: BsonDocument,
    val returnFieldsSelector: BsonDocument? = null,
) {
    /** The database part of [fullCollectionName]. */
    internal val database: String get() = fullCollectionName.substringBefore('.')

    internal companion object {
        /** Encodes [q]; size checks as for OP_MSG. */
        internal fun encode(q: OpQuery, limits: MessageLimits = MessageLimits.DEFAULT): ByteArray {
            val out = BasicOutputBuffer()
            BsonWriting.writeHeader(out, q.requestId, 0, OpCode.OP_QUERY)
            out.writeInt32(q.flags)
            BsonWriting.writeCString(out, q.fullCollectionName, "fullCollectionName")
            out.writeInt32(q.numberToSkip)
            out.writeInt32(q.numberToReturn)
            BsonWriting.writeDocument(out, q.query, limits.maxBsonObjectSize + MessageLimits.COMMAND_OVERHEAD, "query")
            q.returnFieldsSelector?.let { BsonWriting.writeDocument(out, it, limits.maxBsonObjectSize, "returnFieldsSelector") }
            return BsonWriting.finish(out, limits.maxMessageSizeBytes)
        }

        /** Decodes the part after [header]; throws [WireFormatException] for anything malformed. */
        internal fun decode(header: MessageHeader, body: ByteArray): OpQuery {
            if (header.opCode != OpCode.OP_QUERY) throw WireFormatException("expected OP_QUERY (2004), got opCode ${header.opCode}")
            val r = ByteReader(body)
            val flags = r.int32("OP_QUERY flags")
            val name = r.cstring("fullCollectionName")
            val skip = r.int32("numberToSkip")
            val ret = r.int32("numberToReturn")
            val query = r.document("query")
            val selector = if (r.remaining > 0) r.document("returnFieldsSelector") else null
            if (r.remaining != 0) throw WireFormatException("${r.remaining} trailing bytes after OP_QUERY")
            return OpQuery(header.requestId, flags, name, skip, ret, query, selector)
        }
    }
}
