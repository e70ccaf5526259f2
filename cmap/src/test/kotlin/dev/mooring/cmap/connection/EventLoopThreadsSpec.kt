package dev.mooring.cmap.connection

import dev.mooring.cmap.ConnectionSettings
import dev.mooring.cmap.DefaultConnectionFactory
import dev.mooring.cmap.internal.connection.EventLoopGroup
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainOnly
import io.kotest.matchers.ints.shouldBeLessThanOrEqual
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.withContext

/** `ConnectionSettings.eventLoopThreads`: the factory runs exactly that many loops, and refuses a count outside 1..16. */
class EventLoopThreadsSpec : FunSpec({
    fun loopsOf(factory: DefaultConnectionFactory): EventLoopGroup = factory.dispatcher as EventLoopGroup

    test("the factory runs as many event loops as eventLoopThreads, and code dispatched to it runs only on them") {
        for (n in listOf(1, 3)) {
            DefaultConnectionFactory(ConnectionSettings(eventLoopThreads = n)).use { factory ->
                val threads = loopsOf(factory).threads()
                threads.size shouldBe n
                threads.map { it.name }.toSet().size shouldBe n
                // dispatches land on the n loops and nowhere else (200 coroutines with their own jobs)
                val ranOn = coroutineScope {
                    (1..200).map { async(factory.dispatcher) { Thread.currentThread() } }.awaitAll()
                }.toSet()
                ranOn shouldContainOnly threads
                withContext(factory.dispatcher) { Thread.currentThread() in threads } shouldBe true
            }
        }
    }

    test("the default is one loop per core, at most MAX_EVENT_LOOPS") {
        ConnectionSettings().eventLoopThreads shouldBe Runtime.getRuntime().availableProcessors().coerceIn(1, DefaultConnectionFactory.MAX_EVENT_LOOPS)
        DefaultConnectionFactory(ConnectionSettings()).use { loopsOf(it).size shouldBe ConnectionSettings.DEFAULT_EVENT_LOOP_THREADS }
    }

    test("a count outside 1..MAX_EVENT_LOOPS is refused before any loop starts") {
        for (n in listOf(0, -1, DefaultConnectionFactory.MAX_EVENT_LOOPS + 1)) {
            val before = Thread.getAllStackTraces().keys.count { it.name.startsWith("mooring-loop-") && it.isAlive }
            val e = shouldThrow<IllegalArgumentException> { DefaultConnectionFactory(ConnectionSettings(eventLoopThreads = n)) }
            e.message shouldContain "eventLoopThreads must be in 1..${DefaultConnectionFactory.MAX_EVENT_LOOPS}, was $n"
            // no loop was started (loops of factories closed earlier may still be exiting: at most as many as before)
            Thread.getAllStackTraces().keys.count { it.name.startsWith("mooring-loop-") && it.isAlive } shouldBeLessThanOrEqual before
        }
    }
})
