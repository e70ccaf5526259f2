package dev.mooring.testkit.server

import kotlinx.coroutines.flow.Flow
import org.bson.BsonDocument

/**
 * What a [WireServer] does with one request. Immutable. A handler returning `null` instead of a
 * [Reply] lets the server's built-in commands answer.
 */
sealed interface Reply {
    /** Answer with [document] (in OP_REPLY for an OP_QUERY request, else OP_MSG). */
    data class Document(val document: BsonDocument) : Reply

    /** Close the socket now, without answering. */
    data object CloseConnection : Reply

    /**
     * Write raw bytes instead of a well-formed reply. [bytes] gets the request id being answered
     * (so a script can produce a correct or a wrong responseTo). With [closeAfter] the socket is
     * closed right after the bytes, else the server waits for the next request.
     */
    class Raw(val closeAfter: Boolean = false, val bytes: (requestId: Int) -> ByteArray) : Reply

    /** Wait [millis] (suspending, so other connections go on), then do [then]. */
    data class Delayed(val millis: Long, val then: Reply) : Reply

    /**
     * Exhaust replies for an OP_MSG request with `exhaustAllowed`: each collected item is sent as
     * soon as it is emitted, with `moreToCome` as the item says; the server stops after the first
     * item without moreToCome (or when the flow ends). Each reply's responseTo is the previous
     * reply's requestId, as on a real server. A request without exhaustAllowed gets only the first
     * item, without moreToCome.
     */
    class Exhaust(val replies: Flow<Streamed>) : Reply

    /** One exhaust reply. */
    data class Streamed(val document: BsonDocument, val moreToCome: Boolean = true)
}
