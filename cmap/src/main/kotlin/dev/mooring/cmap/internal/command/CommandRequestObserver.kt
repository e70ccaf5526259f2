package dev.mooring.cmap.internal.command

import org.bson.BsonDocument
import kotlin.coroutines.AbstractCoroutineContextElement
import kotlin.coroutines.CoroutineContext

/**
 * Internal API, not stable: a coroutine context element through which a connection reports
 * the wire request id and the document as sent (with `$db` and the Stable API fields) of an
 * application command just before its bytes are written, so command
 * monitoring can publish the started event with the real request id at the moment the command
 * is sent. Connections consult it only in `command`, never during establishment (handshake and
 * authentication are not monitored). [onSending] runs on the connection's coroutine and must
 * not suspend or block.
 */
internal class CommandRequestObserver(private val onSending: (requestId: Int, sent: BsonDocument) -> Unit) :
    AbstractCoroutineContextElement(Key) {
    /** Called by the connection with the request id and body of the message it is about to write; [sent] must not be modified. */
    internal fun sending(requestId: Int, sent: BsonDocument) {
        onSending(requestId, sent)
    }

    /** The context key. */
    internal companion object Key : CoroutineContext.Key<CommandRequestObserver>
}
