package dev.mooring.java.internal

import dev.mooring.cmap.CommandEvent
import dev.mooring.cmap.ConnectionCheckOutStartedEvent
import dev.mooring.cmap.ConnectionPoolEvent
import dev.mooring.events.EventBus
import dev.mooring.events.EventListener
import dev.mooring.events.MooringEvent
import dev.mooring.events.ServerAddress
import dev.mooring.java.CommandListener
import dev.mooring.java.ConnectionPoolListener
import dev.mooring.sdam.ServerHeartbeatEvent
import dev.mooring.sdam.ServerHeartbeatStartedEvent
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import java.util.Collections

/**
 * The facade's one bus listener wants what its Java listeners want: a service with only a pool
 * listener has no command events built for it, and the interest follows listeners added later.
 */
class ListenerDispatcherSpec : FunSpec({
    val address = ServerAddress("db.example", 27017)

    test("the bus's interest follows the Java listeners added to and removed from the dispatcher") {
        val bus = EventBus()
        val dispatcher = ListenerDispatcher()
        val pool = dispatcher.add(ListenerAdapters.pool(object : ConnectionPoolListener {}))
        bus.addListener(dispatcher)
        val commands = bus.interest(CommandEvent::class.java)
        val pools = bus.interest(ConnectionPoolEvent::class.java)
        val heartbeats = bus.interest(ServerHeartbeatEvent::class.java)
        pools.isActive shouldBe true
        commands.isActive shouldBe false
        heartbeats.isActive shouldBe false

        val commandListener = object : CommandListener {}
        val command = dispatcher.add(ListenerAdapters.command(commandListener))
        commands.isActive shouldBe true
        command.close()
        commands.isActive shouldBe false

        dispatcher.add(ListenerAdapters.command(commandListener))
        commands.isActive shouldBe true
        dispatcher.remove(commandListener) shouldBe true
        commands.isActive shouldBe false

        // a plain EventListener without declared types wants every event
        val everything = dispatcher.add(ListenerAdapters.any(EventListener { }))
        heartbeats.isActive shouldBe true
        commands.isActive shouldBe true
        everything.close()
        heartbeats.isActive shouldBe false

        pool.close()
        pools.isActive shouldBe false
    }

    test("an EventListener added through the facade gets only the types it declares") {
        val bus = EventBus()
        val dispatcher = ListenerDispatcher()
        bus.addListener(dispatcher)
        val seen = Collections.synchronizedList(mutableListOf<MooringEvent>())
        dispatcher.add(ListenerAdapters.any(EventListener.of(ServerHeartbeatEvent::class.java) { seen += it }))
        val everything = Collections.synchronizedList(mutableListOf<MooringEvent>())
        dispatcher.add(ListenerAdapters.any(EventListener { everything += it }))
        val checkOut = ConnectionCheckOutStartedEvent(address)
        val heartbeat = ServerHeartbeatStartedEvent(address, connectionId = 1L, awaited = false, timestampMillis = 0L)
        bus.publish(checkOut)
        bus.publish(heartbeat)
        seen shouldBe listOf(heartbeat)
        everything shouldBe listOf(checkOut, heartbeat)
    }
})
