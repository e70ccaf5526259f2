package dev.mooring.driver.internal

import dev.mooring.driver.ReadConcern
import dev.mooring.sdam.ClientSession
import dev.mooring.sdam.CursorType
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.ReadPreference
import dev.mooring.sdam.RunCursorCommandOptions
import dev.mooring.sdam.TimeoutMode
import dev.mooring.sdam.WriteConcern
import kotlinx.serialization.modules.SerializersModule
import org.bson.BsonValue

/**
 * What a database passes to its collections: the cluster, the database name and the operation
 * defaults. Immutable; [limits] reads the write server's limits from the topology (stateless).
 */
internal data class Defaults(
    val cluster: MongoCluster,
    val databaseName: String,
    val readPreference: ReadPreference,
    val readConcern: ReadConcern,
    val writeConcern: WriteConcern,
    val timeoutMS: Long?,
    val module: SerializersModule,
    val limits: ServerLimitsSource,
) {
    init {
        require(timeoutMS == null || timeoutMS >= 0) { "timeoutMS must not be negative, got $timeoutMS" }
    }

    /** True when a timeoutMS applies to operations (this one's or the cluster's; 0 included). */
    val timeoutSet: Boolean get() = (timeoutMS ?: cluster.settings.timeoutMS) != null

    /**
     * A CRUD option's `maxTimeMS`, deprecated by timeoutMS: dropped when a timeoutMS applies
     * (client-side-operations-timeout.md "Validation and Overrides"), else sent as given.
     */
    fun legacyMaxTimeMS(maxTimeMS: Long?): Long? = maxTimeMS.takeUnless { timeoutSet }

    /**
     * The cursor options of a cursor-returning helper: this database's or collection's timeoutMS,
     * a positive [batchSize] for the getMores (0 is the first batch's alone), and the [comment]
     * its getMores carry (null where the helper's spec says they do not).
     */
    fun cursorOptions(
        readPreference: ReadPreference,
        session: ClientSession?,
        timeoutMode: TimeoutMode?,
        batchSize: Int?,
        comment: BsonValue?,
        cursorType: CursorType = CursorType.NON_TAILABLE,
        maxTimeMS: Long? = null,
    ): RunCursorCommandOptions = RunCursorCommandOptions(
        readPreference = readPreference,
        session = session,
        timeoutMS = timeoutMS,
        timeoutMode = timeoutMode,
        cursorType = cursorType,
        batchSize = batchSize?.takeIf { it > 0 },
        maxTimeMS = maxTimeMS,
        comment = comment,
    )
}
