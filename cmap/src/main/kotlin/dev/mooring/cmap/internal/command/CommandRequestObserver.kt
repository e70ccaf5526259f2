package dev.mooring.cmap.internal.command

import org.bson.BsonDocument

/**
 * Internal API, not stable: the callback through which a connection reports
 * the wire request id and the document as sent (with `$db` and the Stable API fields) of an
 * application command just before its bytes are written, so command
 * monitoring can publish the started event with the real request id at the moment the command
 * is sent. It travels only as the argument of [ObservedCommand.command] (a connection that
 * does not implement it never reports, and its started event is published when its outcome is
 * known); connections use it only in `command`, never during establishment (handshake and
 * authentication are not monitored). [onSending] runs on the connection's coroutine and must
 * not suspend or block.
 */
internal class CommandRequestObserver(private val onSending: (requestId: Int, sent: BsonDocument) -> Unit) {
    /** Called by the connection with the request id and body of the message it is about to write; [sent] must not be modified. */
    internal fun sending(requestId: Int, sent: BsonDocument) {
        onSending(requestId, sent)
    }
}
