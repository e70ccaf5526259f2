package dev.mooring.samples.demo

import de.bwaldvogel.mongo.MongoServer
import de.bwaldvogel.mongo.backend.memory.MemoryBackend
import dev.mooring.testkit.replset.ReplicaSetSimulator
import kotlinx.coroutines.delay

/**
 * What the demo talks to: an embedded mongo-java-server, the test kit's replica set, or a
 * server the user named. [close] stops whatever the demo started itself.
 */
sealed interface Deployment : AutoCloseable {
    /** The connection string the demo's cluster uses. */
    val uri: String

    /** A one-line description for the header. */
    val label: String

    /** A user-named deployment; nothing to start or stop. */
    class External(override val uri: String) : Deployment {
        override val label: String get() = "server(s) from the URI"
        override fun close() {}
    }

    /** mongo-java-server (in-memory backend) on a free loopback port. */
    class Embedded private constructor(private val server: MongoServer) : Deployment {
        private val port = server.localAddress.port
        override val uri: String = "mongodb://127.0.0.1:$port/?directConnection=true&heartbeatFrequencyMS=1000"
        override val label: String = "embedded mongo-java-server on 127.0.0.1:$port"
        override fun close() = server.shutdownNow()

        companion object {
            /** Starts the server on a free loopback port. */
            fun start(): Embedded {
                val server = MongoServer(MemoryBackend())
                server.bind("127.0.0.1", 0)
                return Embedded(server)
            }
        }
    }

    /** The test kit's in-process three-member replica set; [stepDown] triggers a failover. */
    class ReplicaSet private constructor(private val rs: ReplicaSetSimulator) : Deployment {
        override val uri: String = rs.seedUri("heartbeatFrequencyMS=500&serverSelectionTimeoutMS=10000")
        override val label: String = "in-process replica set ${rs.setName} (${rs.hosts.joinToString()})"

        /**
         * Steps the primary down and, after [electionDelayMillis] (an election takes a moment on a
         * real set too), elects another member. Returns a description of what happened.
         */
        suspend fun stepDown(electionDelayMillis: Long = 1_000): String {
            val old = rs.primary ?: return "no primary to step down"
            rs.stepDown(old)
            delay(electionDelayMillis)
            val next = rs.members.filter { it != old }.randomOrNull() ?: old
            rs.elect(next)
            return "stepped down ${old.host}, elected ${next.host}"
        }

        override fun close() = rs.close()

        companion object {
            /** Starts three members on free loopback ports, the first one primary, reporting cluster times (as change streams need). */
            suspend fun start(): ReplicaSet = ReplicaSet(ReplicaSetSimulator.start(dataMembers = 3, clusterTime = true))
        }
    }
}
