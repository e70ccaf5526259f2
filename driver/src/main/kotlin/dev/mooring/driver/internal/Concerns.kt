package dev.mooring.driver.internal

import dev.mooring.driver.ReadConcern
import dev.mooring.sdam.WriteAcknowledgement
import dev.mooring.sdam.WriteConcern
import org.bson.BsonBoolean
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonInt64
import org.bson.BsonString

/** The one home of how read and write concerns become command fields (read-write-concern.md). Stateless. */
internal object Concerns {
    /** Adds `readConcern: {level}` unless [readConcern] is the server default. */
    fun applyReadConcern(command: BsonDocument, readConcern: ReadConcern) {
        val level = readConcern.level ?: return
        command["readConcern"] = BsonDocument("level", BsonString(level))
    }

    /**
     * Adds `writeConcern` unless [writeConcern] is the server default and so is the cluster's
     * (which the cluster would add itself); a server default that overrides a cluster default is
     * sent as `{}`. `wtimeout` is left out when a timeoutMS applies (client-side-operations-timeout.md),
     * and a concern that had nothing else is then left out too.
     */
    fun applyWriteConcern(command: BsonDocument, writeConcern: WriteConcern, clusterDefault: WriteConcern, timeoutSet: Boolean) {
        if (writeConcern.isServerDefault && clusterDefault.isServerDefault) return
        // under timeoutMS wtimeout is dropped (client-side-operations-timeout.md): a concern that had only
        // wtimeout is not sent (as the cluster's is not), while an explicit server default stays `{}`
        val d = document(writeConcern, timeoutSet)
        if (d.isNotEmpty() || writeConcern.isServerDefault) command["writeConcern"] = d
    }

    fun document(writeConcern: WriteConcern, timeoutSet: Boolean): BsonDocument {
        val d = BsonDocument()
        when (val w = writeConcern.w) {
            is WriteAcknowledgement.Nodes -> d["w"] = BsonInt32(w.count)
            is WriteAcknowledgement.Tag -> d["w"] = BsonString(w.name)
            null -> Unit
        }
        writeConcern.journal?.let { d["j"] = BsonBoolean.valueOf(it) }
        if (!timeoutSet) writeConcern.wTimeoutMS?.let { d["wtimeout"] = BsonInt64(it) }
        return d
    }

    /** True for `w: 0` (an unacknowledged write). */
    fun isUnacknowledged(writeConcern: WriteConcern): Boolean = writeConcern.w == WriteAcknowledgement.Nodes(0)
}
