package dev.mooring.sdam.internal.retry

import dev.mooring.sdam.WriteAcknowledgement
import dev.mooring.sdam.WriteConcern
import org.bson.BsonBoolean
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonInt64
import org.bson.BsonString

/**
 * The cluster's default write concern ([dev.mooring.sdam.MongoClusterSettings.writeConcern]: the
 * URI's `w`, `wTimeoutMS`, `journal`) on a write's command, as drivers apply a client's write
 * concern to their write operations: added when the command has no `writeConcern` of its own and
 * the default specifies something. `wtimeout` is left out when the operation runs under a
 * timeoutMS (client-side-operations-timeout.md: wTimeoutMS is ignored when timeoutMS is set).
 * Pure; the command is never modified (a copy is returned).
 */
internal object DefaultWriteConcern {
    fun applyTo(command: BsonDocument, concern: WriteConcern, underTimeoutMS: Boolean): BsonDocument {
        if (concern.isServerDefault || command.containsKey("writeConcern")) return command
        val wc = BsonDocument()
        when (val w = concern.w) {
            is WriteAcknowledgement.Nodes -> wc["w"] = BsonInt32(w.count)
            is WriteAcknowledgement.Tag -> wc["w"] = BsonString(w.name)
            null -> Unit
        }
        concern.journal?.let { wc["j"] = BsonBoolean(it) }
        if (!underTimeoutMS) concern.wTimeoutMS?.let { wc["wtimeout"] = BsonInt64(it) }
        return if (wc.isEmpty()) command else command.clone().append("writeConcern", wc)
    }
}
