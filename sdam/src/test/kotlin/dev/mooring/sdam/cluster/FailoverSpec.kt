package dev.mooring.sdam.cluster

import dev.mooring.sdam.ApplicationError
import dev.mooring.sdam.ApplicationErrorKind
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.sdam.ServerType
import dev.mooring.sdam.internal.topology.ClusterInternals
import dev.mooring.testkit.replset.ReplicaSetSimulator
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.withTimeout
import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicInteger
import kotlin.time.Duration.Companion.seconds

/** Failover under load: kill the primary, elect another, and check convergence and recovery. */
class FailoverSpec : FunSpec({
    timeout = 180.seconds.inWholeMilliseconds

    test("64 concurrent runCommand callers survive a failover: the topology converges, writes resume on the new primary, stale errors are ignored") {
        ReplicaSetSimulator.start(dataMembers = 3).use { rs ->
            val uri = rs.seedUri("heartbeatFrequencyMS=500&serverSelectionTimeoutMS=30000&maxPoolSize=100")
            val cluster = MongoCluster(MongoClusterSettings.fromUri(uri))
            try {
                val oldPrimary = rs.primary!!
                val newPrimary = rs.members[1]
                cluster.awaitTopology { it.primary?.address == oldPrimary.address && it.servers.values.count { s -> s.type == ServerType.RS_SECONDARY } == 2 }
                val tvBeforeElection = cluster.topology.value.servers.getValue(newPrimary.address).topologyVersion!!
                val ids = AtomicInteger()
                val converged = AtomicBoolean(false)
                val stop = AtomicBoolean(false)
                val failures = AtomicInteger()
                val recovered = AtomicInteger() // workers with a successful write started after convergence
                coroutineScope {
                    val workers = (1..64).map {
                        async {
                            var successesAfterConvergence = 0
                            while (!stop.get()) {
                                val after = converged.get()
                                val id = ids.incrementAndGet()
                                val ok = runCatching {
                                    cluster.runCommand("test", BsonDocument("insert", BsonString("c")).append("documents", BsonArray(listOf(BsonDocument("_id", BsonInt32(id))))))
                                }.isSuccess
                                if (!ok) failures.incrementAndGet()
                                if (ok && after && successesAfterConvergence++ == 0) recovered.incrementAndGet()
                                if (!ok) delay(20)
                            }
                            successesAfterConvergence
                        }
                    }
                    withTimeout(10.seconds) { while (ids.get() < 640) delay(5) } // load is flowing
                    rs.kill(oldPrimary)
                    rs.elect(newPrimary)
                    cluster.awaitTopology(30.seconds) {
                        it.primary?.address == newPrimary.address && it.servers.getValue(oldPrimary.address).type == ServerType.UNKNOWN
                    }
                    converged.set(true)
                    val insertsBefore = newPrimary.counters!!.commandCount("insert")
                    // Every caller writes successfully again (to the new primary: the only one accepting writes).
                    withTimeout(30.seconds) { while (recovered.get() < 64) delay(10) }
                    stop.set(true)
                    (newPrimary.counters!!.commandCount("insert") >= insertsBefore + 64) shouldBe true
                    workers.awaitAll().forEach { (it > 0) shouldBe true }
                }
                val t = cluster.topology.value
                t.primary!!.address shouldBe newPrimary.address
                t.servers.values.count { it.type == ServerType.RS_PRIMARY } shouldBe 1

                // Stale errors change nothing: a NotWritablePrimary carrying the new primary's pre-election topologyVersion...
                val live = ClusterInternals.topology(cluster)
                live.onApplicationError(
                    ApplicationError(newPrimary.address, ApplicationErrorKind.COMMAND, code = 10107, message = "late", topologyVersion = tvBeforeElection),
                )
                // ...and a network error from a connection of the old primary's pool generation before it was cleared.
                rs.restart(oldPrimary)
                cluster.awaitTopology { it.servers.getValue(oldPrimary.address).type == ServerType.RS_SECONDARY }
                val oldGeneration = cluster.poolStatistics().getValue(oldPrimary.address).generation
                (oldGeneration >= 1) shouldBe true
                live.onApplicationError(ApplicationError(oldPrimary.address, ApplicationErrorKind.NETWORK, message = "late reset", generation = oldGeneration - 1))
                val after = cluster.topology.value
                after.primary!!.address shouldBe newPrimary.address
                after.servers.getValue(oldPrimary.address).type shouldBe ServerType.RS_SECONDARY
                cluster.poolStatistics().getValue(oldPrimary.address).generation shouldBe oldGeneration
                // The data written through the failover is all on the set, and new writes go to the new primary.
                cluster.runCommand("test", BsonDocument("insert", BsonString("c")).append("documents", BsonArray(listOf(BsonDocument("_id", BsonInt32(-1))))))
                    .getInt32("n").value shouldBe 1
            } finally {
                cluster.closeAndCheckNoCoroutines()
            }
        }
    }
})

