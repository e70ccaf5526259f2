package dev.mooring.sdam.cluster

import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.TopologyDescription
import dev.mooring.sdam.internal.topology.ClusterInternals
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.withTimeout
import org.bson.BsonDocument
import org.bson.BsonInt32
import kotlin.time.Duration
import kotlin.time.Duration.Companion.seconds

/** `{ping: 1}`. */
fun ping(): BsonDocument = BsonDocument("ping", BsonInt32(1))

/** Waits (bounded) until the cluster's topology satisfies [predicate]; returns that description. */
suspend fun MongoCluster.awaitTopology(limit: Duration = 20.seconds, predicate: (TopologyDescription) -> Boolean): TopologyDescription =
    withTimeout(limit) { topology.first(predicate) }

/** Closes [cluster] and checks that none of its coroutines survived. */
suspend fun MongoCluster.closeAndCheckNoCoroutines() {
    closeSuspending()
    val job = ClusterInternals.rootJob(this)
    job.isCompleted shouldBe true
    job.children.toList() shouldBe emptyList()
}
