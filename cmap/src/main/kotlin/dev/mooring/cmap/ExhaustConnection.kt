package dev.mooring.cmap

import kotlinx.coroutines.flow.Flow
import org.bson.BsonDocument

/**
 * A [Connection] that can also run the OP_MSG exhaust protocol, as the streaming SDAM monitor
 * does with `hello` + `maxAwaitTimeMS`.
 *
 * [exhaust] returns a cold [Flow]. Collecting it sends [command] once with the
 * `exhaustAllowed` flag and emits every reply: the flow completes after the first reply that
 * does not have `moreToCome` set. While it is being collected the connection is busy: [command]
 * and a second collection fail with [IllegalStateException]. If the collector stops early
 * (cancellation, `take(n)`, an exception) while the server still has replies to send, the
 * connection is closed, because its wire state is no longer known. Errors are the same typed
 * errors [command] throws; an `ok: 0` reply ends the flow with a [MongoCommandException].
 *
 * Replies: `ok: 1` replies are returned as they are, including ones that carry a
 * `writeConcernError` (the operation layer and SDAM inspect that field; the connection is
 * healthy). `ok: 0` becomes [MongoCommandException]. Timeouts become
 * [MongoNetworkTimeoutException], socket failures [MongoNetworkException], malformed replies
 * [MongoProtocolException]; all three close the connection. A command too large to send fails
 * with [MongoMessageEncodingException] before anything is written, and the connection stays
 * usable. Every error carries the address, this connection's generation and whether the
 * handshake (including authentication) had completed.
 */
public interface ExhaustConnection : EstablishableConnection {
    /**
     * Sends [command] to [database] with `exhaustAllowed` and emits the replies. Each wait for a
     * reply is bounded by [readTimeoutMS] (0 = no limit) instead of socketTimeoutMS, because a
     * streaming hello waits up to maxAwaitTimeMS on the server side.
     */
    public fun exhaust(database: String, command: BsonDocument, readTimeoutMS: Long): Flow<BsonDocument>

    /**
     * Runs [command] like [Connection.command] but bounds the whole round trip by [timeoutMS]
     * (0 = no limit) instead of socketTimeoutMS; for monitors, whose reads use connectTimeoutMS.
     */
    public suspend fun command(database: String, command: BsonDocument, timeoutMS: Long): BsonDocument
}
