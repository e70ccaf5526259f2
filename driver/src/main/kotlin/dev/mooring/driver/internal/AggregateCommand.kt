package dev.mooring.driver.internal

import kotlinx.coroutines.withTimeoutOrNull
import kotlinx.coroutines.flow.first
import dev.mooring.driver.AggregateOptions
import dev.mooring.driver.ReadConcern
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.ReadPreference
import dev.mooring.sdam.ReadPreferenceMode
import dev.mooring.sdam.TopologyType
import dev.mooring.sdam.WriteConcern
import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString
import org.bson.conversions.Bson

/** The `aggregate` command of crud.md's aggregate helper, with its write-stage rules. Stateless. */
internal object AggregateCommand {
    /** True when [pipeline] ends in `$out` or `$merge` (the stages that write and return nothing). */
    fun writes(pipeline: BsonArray): Boolean =
        pipeline.lastOrNull()?.let { it.isDocument && it.asDocument().firstKeyOrNull()?.let { k -> k == "\$out" || k == "\$merge" } == true } == true

    fun command(
        collection: String,
        pipeline: BsonArray,
        o: AggregateOptions,
        readConcern: ReadConcern,
        writeConcern: WriteConcern,
        clusterWriteConcern: WriteConcern,
        timeoutSet: Boolean,
        maxTimeMS: Long?,
    ): BsonDocument {
        val writes = writes(pipeline)
        val cursor = BsonDocument()
        // crud.md: no batchSize of zero with $out/$merge
        o.batchSize?.let { if (!(writes && it == 0)) cursor["batchSize"] = BsonInt32(it) }
        val cmd = BsonDocument("aggregate", BsonString(collection)).append("pipeline", pipeline).append("cursor", cursor)
        cmd.opt("allowDiskUse", o.allowDiskUse).opt("bypassDocumentValidation", o.bypassDocumentValidation)
        cmd.optDoc("collation", o.collation).opt("comment", o.comment).opt("hint", o.hint).optDoc("let", o.let).opt("maxTimeMS", maxTimeMS).optRawData(o.rawData)
        Concerns.applyReadConcern(cmd, readConcern)
        if (writes) Concerns.applyWriteConcern(cmd, writeConcern, clusterWriteConcern, timeoutSet)
        return cmd
    }

    /**
     * The read preference of a pipeline with a write stage (crud.md "Read preferences and server
     * selection"): primary when an available server is older than 5.0 (wire version 13), else [readPreference].
     */
    suspend fun writeStageReadPreference(cluster: MongoCluster, readPreference: ReadPreference): ReadPreference {
        if (readPreference.mode == ReadPreferenceMode.PRIMARY) return readPreference
        val now = cluster.topology.value
        if (now.type == TopologyType.LOAD_BALANCED) return readPreference
        // decided on the servers discovered: before the first is, wait for it (bounded as server selection is)
        val topology = if (now.servers.values.any { it.isAvailable }) now else {
            withTimeoutOrNull(cluster.settings.serverSelectionTimeoutMS) { cluster.topology.first { t -> t.servers.values.any { it.isAvailable } } } ?: now
        }
        val old = topology.servers.values.any { it.isAvailable && it.maxWireVersion < 13 }
        return if (old) ReadPreference.PRIMARY else readPreference
    }

    private fun BsonDocument.firstKeyOrNull(): String? = if (isEmpty()) null else firstKey
}
