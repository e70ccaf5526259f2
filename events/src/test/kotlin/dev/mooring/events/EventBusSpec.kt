package dev.mooring.events

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Job
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.channels.Channel
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.flow.collect
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.flow.onEach
import kotlinx.coroutines.flow.onSubscription
import kotlinx.coroutines.flow.take
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.launch
import kotlinx.coroutines.withTimeout
import java.util.Collections

private data class Tick(val n: Int, override val timestampMillis: Long = 0) : MooringEvent
private data class Tock(val n: Int, override val timestampMillis: Long = 0) : MooringEvent

/** Launches [collect] over [bus]'s events and returns once that collector is subscribed. */
private suspend fun CoroutineScope.subscribed(bus: EventBus, collect: suspend (Flow<MooringEvent>) -> Unit): Job {
    val ready = CompletableDeferred<Unit>()
    val job = launch { collect(bus.events.onSubscription { ready.complete(Unit) }) }
    ready.await()
    return job
}

class EventBusSpec : FunSpec({
    test("listeners see every event in order; a throwing listener is skipped, the others still see the event") {
        val bus = EventBus()
        val seen = Collections.synchronizedList(ArrayList<MooringEvent>())
        bus.addListener { throw IllegalStateException("boom") }
        val handle = bus.addListener { seen += it }
        bus.hasSubscribers shouldBe true
        repeat(3) { bus.publish(Tick(it)) }
        handle.close()
        bus.publish(Tick(99))
        seen shouldBe listOf(Tick(0), Tick(1), Tick(2))
    }

    test("hasSubscribers follows flow collectors: true while one collects, false after it is cancelled or fails") {
        val bus = EventBus()
        bus.hasSubscribers shouldBe false
        coroutineScope {
            val job = subscribed(bus) { it.collect { } }
            bus.hasSubscribers shouldBe true
            job.cancel()
            job.join()
        }
        bus.hasSubscribers shouldBe false

        shouldThrow<IllegalArgumentException> {
            coroutineScope {
                subscribed(bus) { events -> events.collect { require(false) { "collector fails" } } }
                bus.hasSubscribers shouldBe true
                bus.publish(Tick(1))
            }
        }
        bus.hasSubscribers shouldBe false
    }

    test("flow collectors receive the events published while they collect, in publication order") {
        val bus = EventBus()
        coroutineScope {
            val got = subscribed(bus) { events -> events.take(100).toList() shouldBe (0 until 100).map { Tick(it) } }
            repeat(100) { bus.publish(Tick(it)) }
            withTimeout(10_000) { got.join() }
        }
    }

    test("a collector that falls behind loses events, never the publisher's time: the loss is counted and reported") {
        val bus = EventBus(bufferCapacity = 4)
        val gate = Channel<Unit>()
        coroutineScope {
            val received = Collections.synchronizedList(ArrayList<MooringEvent>())
            val slow = subscribed(bus) { events ->
                events.onEach {
                    received += it
                    if (it == Tick(0)) gate.receive() // hold the collector on the first event
                }.collect()
            }
            bus.publish(Tick(0))
            withTimeout(10_000) { while (Tick(0) !in received) kotlinx.coroutines.delay(5) }
            // the collector is stuck on Tick(0): 4 more fit its buffer, the other 5 are dropped,
            // and publish never suspends or blocks on it
            for (i in 1..9) bus.publish(Tick(i))
            bus.droppedEvents shouldBe 5L
            gate.send(Unit)
            withTimeout(10_000) {
                while (received.size < 5) kotlinx.coroutines.delay(5)
            }
            bus.publish(Tick(10))
            val report = withTimeout(10_000) {
                while (received.none { it is EventsDropped }) kotlinx.coroutines.delay(5)
                received.first { it is EventsDropped } as EventsDropped
            }
            report.count shouldBe 5L
            withTimeout(10_000) { while (Tick(10) !in received) kotlinx.coroutines.delay(5) }
            slow.cancel()
        }
        bus.hasSubscribers shouldBe false
    }

    test("first() on the events flow sees the next event and unsubscribes") {
        val bus = EventBus()
        coroutineScope {
            val next = subscribed(bus) { events -> events.first() shouldBe Tick(7) }
            bus.publish(Tick(7))
            withTimeout(10_000) { next.join() }
        }
        bus.hasSubscribers shouldBe false
    }

    test("a listener with eventTypes receives only those events; interest in a type follows the listeners that want it and flow collectors") {
        val bus = EventBus()
        val tockInterest = bus.interest(Tock::class.java)
        val ticks = Collections.synchronizedList(mutableListOf<MooringEvent>())
        bus.addListener(EventListener.of(Tick::class.java) { ticks += it })
        bus.hasSubscribers shouldBe true
        bus.interest(Tick::class.java).isActive shouldBe true
        tockInterest.isActive shouldBe false
        bus.publish(Tick(1))
        bus.publish(Tock(2))
        ticks shouldBe listOf(Tick(1))

        val all = bus.addListener { }
        tockInterest.isActive shouldBe true
        all.close()
        tockInterest.isActive shouldBe false
        // a listener for a supertype wants the subtype's events
        val anyEvent = bus.addListener(EventListener.of(MooringEvent::class.java) { })
        tockInterest.isActive shouldBe true
        anyEvent.close()
        tockInterest.isActive shouldBe false

        coroutineScope {
            val collector = subscribed(bus) { events -> events.first() shouldBe Tock(3) }
            tockInterest.isActive shouldBe true
            bus.publish(Tock(3))
            withTimeout(10_000) { collector.join() }
        }
        tockInterest.isActive shouldBe false
    }

    test("a ChangingEventListener's new eventTypes are read again at eventTypesChanged, by every bus it is on, until its registration closes") {
        class Fanout : ChangingEventListener() {
            val seen = Collections.synchronizedList(mutableListOf<MooringEvent>())
            @Volatile override var eventTypes: Set<Class<out MooringEvent>>? = emptySet()
            fun want(types: Set<Class<out MooringEvent>>?) {
                eventTypes = types
                eventTypesChanged()
            }
            override fun onEvent(event: MooringEvent) {
                seen += event
            }
        }
        val first = EventBus()
        val second = EventBus()
        val fanout = Fanout()
        val onFirst = first.addListener(fanout)
        second.addListener(fanout)
        val tock1 = first.interest(Tock::class.java)
        val tock2 = second.interest(Tock::class.java)
        tock1.isActive shouldBe false
        first.publish(Tick(1))
        fanout.seen shouldBe emptyList()

        fanout.want(setOf(Tock::class.java))
        tock1.isActive shouldBe true
        tock2.isActive shouldBe true
        first.interest(Tick::class.java).isActive shouldBe false
        first.publish(Tick(2))
        first.publish(Tock(3))
        second.publish(Tock(4))
        fanout.seen shouldBe listOf(Tock(3), Tock(4))

        fanout.want(null) // every event
        first.publish(Tick(5))
        fanout.seen shouldBe listOf(Tock(3), Tock(4), Tick(5))

        onFirst.close()
        fanout.want(emptySet())
        tock2.isActive shouldBe false
        tock1.isActive shouldBe false
        first.addListener(EventListener.of(Tock::class.java) { })
        tock1.isActive shouldBe true
        fanout.want(null) // the closed registration is not brought back
        first.publish(Tick(6))
        fanout.seen shouldBe listOf(Tock(3), Tock(4), Tick(5))
    }
})
