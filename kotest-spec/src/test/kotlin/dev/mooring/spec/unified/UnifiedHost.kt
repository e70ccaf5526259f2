package dev.mooring.spec.unified

import dev.mooring.testkit.replset.ReplicaSetSimulator
import dev.mooring.testkit.server.WireServer
import org.bson.BsonDocument

/** The deployment a unified test runs against: a standalone [WireServer] or a [ReplicaSetSimulator]. */
sealed interface UnifiedHost : AutoCloseable {
    /** The seed URI without options (`mongodb://host/?` ready for `key=value&...`). */
    fun uri(options: Map<String, String>): String

    /** Configures (or with mode off clears) the failCommand fail point where the test's client runs commands. */
    fun configureFailPoint(command: BsonDocument)

    class Single(private val server: WireServer) : UnifiedHost {
        override fun uri(options: Map<String, String>) =
            "mongodb://${server.address}/" + if (options.isEmpty()) "" else "?" + options.entries.joinToString("&") { "${it.key}=${it.value}" }

        override fun configureFailPoint(command: BsonDocument) = server.configureFailPoint(command)

        override fun close() = server.close()
    }

    class ReplicaSet(private val rs: ReplicaSetSimulator) : UnifiedHost {
        override fun uri(options: Map<String, String>) = rs.seedUri(options.entries.joinToString("&") { "${it.key}=${it.value}" })

        /** Fail points go to the primary, where the test's operations run (useMultipleMongoses is irrelevant here). */
        override fun configureFailPoint(command: BsonDocument) = rs.primary!!.configureFailPoint(command)

        override fun close() = rs.close()
    }

    companion object {
        /** The topology names of runOnRequirements this runner can host, in order of preference. */
        val hostable = listOf("single", "replicaset")

        suspend fun start(topology: String): UnifiedHost = when (topology) {
            "single" -> Single(WireServer.start())
            // a stepped-down primary hands the election off at once, as mongod 4.0.2+ does
            "replicaset" -> ReplicaSet(ReplicaSetSimulator.start(dataMembers = 3).also { it.electionHandoff = true })
            else -> error("cannot host $topology")
        }
    }
}
