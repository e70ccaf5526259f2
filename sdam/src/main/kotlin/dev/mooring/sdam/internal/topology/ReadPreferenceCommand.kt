package dev.mooring.sdam.internal.topology

import dev.mooring.cmap.internal.wire.AppendedCommand
import dev.mooring.sdam.ReadPreference
import dev.mooring.sdam.ReadPreferenceMode
import dev.mooring.sdam.ServerDescription
import dev.mooring.sdam.ServerType
import dev.mooring.sdam.TopologyType
import org.bson.BsonArray
import org.bson.BsonBoolean
import org.bson.BsonDocument
import org.bson.BsonInt64
import org.bson.BsonString

/** Builds the `$readPreference` a command carries (server-selection.md "Passing read preference to mongos and load balancers", OP_MSG). Pure. */
internal object ReadPreferenceCommand {
    /**
     * The `$readPreference` for [readPreference] sent to [server] in a [topologyType]
     * topology, or null when none is sent: never to a standalone (server-selection.md "Type
     * Standalone"); on a direct connection to a server that is not a mongos (topology type
     * Single) a primary read preference becomes primaryPreferred, so the read works on a
     * secondary, and any other is sent as the application set it ("Topology type: Single", OP_MSG);
     * otherwise only non-primary modes are sent.
     */
    fun forCommand(readPreference: ReadPreference, topologyType: TopologyType, server: ServerDescription): BsonDocument? {
        if (server.type == ServerType.STANDALONE) return null
        if (readPreference.mode == ReadPreferenceMode.PRIMARY) {
            val direct = topologyType == TopologyType.SINGLE && server.type != ServerType.MONGOS && server.type != ServerType.LOAD_BALANCER
            return if (direct) BsonDocument("mode", BsonString(ReadPreferenceMode.PRIMARY_PREFERRED.value)) else null
        }
        return toDocument(readPreference)
    }

    /** [command] with `$readPreference` added when [forCommand] gives one (a copy; [command] is not changed). */
    fun withReadPreference(command: BsonDocument, readPreference: ReadPreference, topologyType: TopologyType, server: ServerDescription): BsonDocument {
        val rp = forCommand(readPreference, topologyType, server) ?: return command
        // appended, not copied: nested values are shared, never modified
        return AppendedCommand.append(command, "\$readPreference", rp)
    }

    fun toDocument(rp: ReadPreference): BsonDocument {
        val d = BsonDocument("mode", BsonString(rp.mode.value))
        if (rp.tagSets.isNotEmpty()) {
            d["tags"] = BsonArray(rp.tagSets.map { set -> BsonDocument().also { t -> set.forEach { (k, v) -> t[k] = BsonString(v) } } })
        }
        rp.maxStalenessSeconds?.takeIf { it > 0 }?.let { d["maxStalenessSeconds"] = BsonInt64(it) }
        rp.hedgeEnabled?.let { d["hedge"] = BsonDocument("enabled", BsonBoolean(it)) }
        return d
    }
}
