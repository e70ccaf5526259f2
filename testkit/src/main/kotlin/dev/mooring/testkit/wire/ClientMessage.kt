package dev.mooring.testkit.wire

import org.bson.BsonDocument

/**
 * One request a test-kit server read off the wire, decoded by [ServerWireCodec]. Immutable.
 * [compressorId] is the OP_COMPRESSED compressor id it arrived in, or null when uncompressed.
 */
internal sealed interface ClientMessage {
    val requestId: Int
    val compressorId: Int?

    /** The database and the command: `$db` for OP_MSG, the namespace's database for OP_QUERY. */
    val database: String
    val command: BsonDocument

    /** OP_QUERY (the legacy hello of a client that does not yet know the server speaks OP_MSG). */
    data class Query(
        override val requestId: Int,
        override val compressorId: Int?,
        val fullCollectionName: String,
        override val command: BsonDocument,
    ) : ClientMessage {
        override val database: String get() = fullCollectionName.substringBefore('.')
    }

    /** OP_MSG; [command] is the kind-0 body with each kind-1 document sequence added as an array under its identifier. */
    data class Msg(
        override val requestId: Int,
        override val compressorId: Int?,
        val flagBits: Int,
        override val command: BsonDocument,
    ) : ClientMessage {
        val moreToCome: Boolean get() = flagBits and ServerWireCodec.MORE_TO_COME != 0
        val exhaustAllowed: Boolean get() = flagBits and ServerWireCodec.EXHAUST_ALLOWED != 0
        override val database: String get() = command["\$db"]?.takeIf { it.isString }?.asString()?.value ?: ""
    }

    /** Any other opcode: the servers close the connection. */
    data class Unsupported(override val requestId: Int, override val compressorId: Int?, val opCode: Int) : ClientMessage {
        override val database: String get() = ""
        override val command: BsonDocument get() = BsonDocument()
    }
}
