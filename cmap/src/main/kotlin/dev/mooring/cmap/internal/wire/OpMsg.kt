package dev.mooring.cmap.internal.wire

import org.bson.BsonDocument

/**
 * One kind-1 section: a named sequence of documents (for example `documents` of an insert). Immutable
 * as long as callers do not mutate the documents.
 */
internal data class DocumentSequence(val identifier: String, val documents: List<BsonDocument>)

/**
 * An OP_MSG: flag bits, exactly one kind-0 [body] and any number of kind-1 [sequences] with
 * unique identifiers. Immutable as long as callers do not mutate the documents.
 */
internal data class OpMsg(
    val requestId: Int,
    val responseTo: Int,
    val flagBits: Int,
    val body: BsonDocument,
    val sequences: List<DocumentSequence> = emptyList(),
    /** Fields set on [body] as it is encoded (`$db`, Stable API), see [CommandBody]; null on decoded messages. */
    val trailer: BodyTrailer? = null,
) {
    /** True when the sender will send another message without waiting for a request. */
    internal val moreToCome: Boolean get() = flagBits and MORE_TO_COME != 0

    /** True when the message carried (and, on decode, passed) a CRC-32C checksum. */
    internal val checksumPresent: Boolean get() = flagBits and CHECKSUM_PRESENT != 0

    /** True when the requester accepts several replies (exhaust). */
    internal val exhaustAllowed: Boolean get() = flagBits and EXHAUST_ALLOWED != 0

    /** The body with every sequence folded in as an array field, as the server sees the command. */
    internal fun bodyWithSequences(): BsonDocument {
        if (sequences.isEmpty()) return body
        val d = BsonDocument()
        d.putAll(body)
        for (s in sequences) d[s.identifier] = org.bson.BsonArray(s.documents)
        return d
    }

    internal companion object {
        /** flagBits bit 0: a CRC-32C checksum follows the sections. */
        internal const val CHECKSUM_PRESENT: Int = 1

        /** flagBits bit 1: another message follows without a request. */
        internal const val MORE_TO_COME: Int = 1 shl 1

        /** flagBits bit 16: the requester is prepared for several replies. */
        internal const val EXHAUST_ALLOWED: Int = 1 shl 16

        /** Bits 0-15 are "required": an unknown one set is an error. */
        internal const val REQUIRED_MASK: Int = 0xffff
        internal const val KNOWN_REQUIRED: Int = CHECKSUM_PRESENT or MORE_TO_COME
    }
}
