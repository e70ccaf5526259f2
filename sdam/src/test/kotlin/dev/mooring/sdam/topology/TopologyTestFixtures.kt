package dev.mooring.sdam.topology

import dev.mooring.events.EventListener
import dev.mooring.events.MooringEvent
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.TopologyDescription
import dev.mooring.sdam.internal.topology.ClusterInternals
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.withTimeout
import org.bson.BsonDocument
import org.bson.BsonInt32
import java.util.concurrent.CopyOnWriteArrayList
import kotlin.time.Duration
import kotlin.time.Duration.Companion.seconds

/** `{ping: 1}`. */
internal fun ping(): BsonDocument = BsonDocument("ping", BsonInt32(1))

/** Waits (bounded) until the cluster's topology satisfies [predicate]; returns that description. */
internal suspend fun MongoCluster.awaitTopology(limit: Duration = 20.seconds, predicate: (TopologyDescription) -> Boolean): TopologyDescription =
    withTimeout(limit) { topology.first(predicate) }

/** A synchronous listener that keeps every event in order (nothing is dropped). Thread-safe. */
internal class EventRecorder : EventListener {
    private val list = CopyOnWriteArrayList<MooringEvent>()

    override fun onEvent(event: MooringEvent) {
        list.add(event)
    }

    /** A snapshot of the events so far. */
    val events: List<MooringEvent> get() = list.toList()

    inline fun <reified T : MooringEvent> ofType(): List<T> = events.filterIsInstance<T>()
}

/** Closes the cluster and checks (through the internal root job) that none of its coroutines survived. */
internal suspend fun MongoCluster.closeAndCheckNoCoroutines() {
    closeSuspending()
    val job = ClusterInternals.rootJob(this)
    job.isCompleted shouldBe true
    job.children.toList() shouldBe emptyList()
}
