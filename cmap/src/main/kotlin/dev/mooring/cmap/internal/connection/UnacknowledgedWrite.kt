package dev.mooring.cmap.internal.connection

import org.bson.BsonDocument
import org.bson.BsonInt32

/**
 * Unacknowledged writes (a command with `writeConcern: {w: 0}`): OP_MSG sends them with the
 * `moreToCome` flag, so the server does not answer, and the driver reports the reply `{ok: 1}`
 * (message.md, command-logging-and-monitoring.md "Unacknowledged/Acknowledged Writes"). Pure.
 */
internal object UnacknowledgedWrite {
    /** True when [command] carries `writeConcern: {w: 0}`. */
    fun isUnacknowledged(command: BsonDocument): Boolean {
        val w = (command["writeConcern"] as? BsonDocument)?.get("w") ?: return false
        return w.isNumber && w.asNumber().intValue() == 0
    }

    /** The reply reported for an unacknowledged write: `{ok: 1}` (a new document each time). */
    fun reply(): BsonDocument = BsonDocument("ok", BsonInt32(1))
}
