package dev.mooring.sdam

import dev.mooring.events.EventBus
import dev.mooring.events.ServerAddress
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.async
import kotlinx.coroutines.flow.filterIsInstance
import kotlinx.coroutines.flow.take
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.withTimeout
import kotlinx.coroutines.yield
import org.bson.BsonDocument
import kotlin.time.Duration.Companion.seconds

/**
 * The SDAM events form one sealed family ([SdamEvent]) with three branches, so a `when` over
 * them is exhaustive without `else`: a new event class that joins no branch is a compile error
 * in [family] below, and one that joins the wrong branch fails here.
 */
class SdamEventFamiliesSpec : FunSpec({
    val a = ServerAddress("a")
    val id = TopologyId("t")
    val unknown = ServerDescription.unknown(a)

    val all: List<SdamEvent> = listOf(
        TopologyOpeningEvent(id, 1),
        TopologyDescriptionChangedEvent(id, TopologyDescription.EMPTY, TopologyDescription.EMPTY, 1),
        TopologyClosedEvent(id, 1),
        ServerOpeningEvent(id, a, 1),
        ServerDescriptionChangedEvent(id, a, unknown, unknown, 1),
        ServerClosedEvent(id, a, 1),
        ServerHeartbeatStartedEvent(a, 7, false, 1),
        ServerHeartbeatSucceededEvent(a, 7, BsonDocument(), 1, true, 1),
        ServerHeartbeatFailedEvent(a, null, RuntimeException("x"), 1, false, 1),
    )

    test("every SDAM event belongs to exactly one branch, and an exhaustive when needs no else") {
        all.map { family(it) } shouldContainExactly listOf(
            "topology t", "topology t", "topology t",
            "server t a:27017", "server t a:27017", "server t a:27017",
            "heartbeat a:27017 7 false", "heartbeat a:27017 7 true", "heartbeat a:27017 null false",
        )
    }

    test("a bus subscriber filtering by branch sees exactly that branch's events, in order") {
        val bus = EventBus()
        withTimeout(10.seconds) {
            val servers = async { bus.events.filterIsInstance<ServerEvent>().take(3).toList() }
            while (!bus.hasSubscribers) yield()
            all.forEach { bus.publish(it) }
            servers.await().map { it::class } shouldBe listOf(ServerOpeningEvent::class, ServerDescriptionChangedEvent::class, ServerClosedEvent::class)
        }
    }
})

private fun family(e: SdamEvent): String = when (e) {
    is TopologyEvent -> "topology ${e.topologyId.value}"
    is ServerEvent -> "server ${e.topologyId.value} ${e.address}"
    is ServerHeartbeatEvent -> "heartbeat ${e.address} ${e.connectionId} ${e.awaited}"
}
