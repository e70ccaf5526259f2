package dev.mooring.integration.testkit.replset

import dev.mooring.testkit.replset.MemberState
import dev.mooring.testkit.replset.ReplicaSetSimulator
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.channels.Channel
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.launch
import kotlinx.coroutines.withTimeout
import org.bson.BsonDocument
import java.util.concurrent.atomic.AtomicInteger
import kotlin.time.Duration.Companion.seconds

class SimulatorConcurrencySpec : FunSpec({
    timeout = 60.seconds.inWholeMilliseconds
    val client = RawClient()
    afterSpec { client.close() }

    test("concurrent elections and step downs keep the state consistent and the exhaust stream monotonic") {
        ReplicaSetSimulator.start(dataMembers = 4).use { rs ->
            val watched = rs.members[3]
            val c = client.connect(watched)
            val replies = Channel<BsonDocument>(Channel.UNLIMITED)
            val elections = AtomicInteger()
            // Read the starting version here, not inside the stream's coroutine: that coroutine may
            // first run after every change below, and an awaitable hello naming the current
            // version then (correctly) waits for a change that never comes.
            val start = watched.topologyVersion
            coroutineScope {
                val stream = launch {
                    c.exhaust("admin", RawClient.awaitableHello(start, 600_000), 0).collect { replies.send(it) }
                }
                // One change before the storm, and its reply: the stream is established and waiting.
                rs.elect(rs.members[0])
                elections.incrementAndGet()
                var last = withTimeout(20_000) { replies.receive().tv().counter }
                (last > start.counter) shouldBe true
                var received = 1
                coroutineScope {
                    repeat(4) { worker ->
                        launch(Dispatchers.Default) {
                            repeat(50) { i ->
                                val target = rs.members[(worker + i) % 3]
                                rs.elect(target)
                                elections.incrementAndGet()
                                try {
                                    rs.stepDown(target)
                                } catch (_: IllegalStateException) {
                                    // another worker elected someone else in between: expected
                                }
                            }
                        }
                    }
                }
                rs.elect(rs.members[0])
                elections.incrementAndGet()
                val finalTv = watched.topologyVersion
                withTimeout(20_000) {
                    while (last < finalTv.counter) {
                        val tv = replies.receive().tv()
                        (tv.counter > last) shouldBe true
                        last = tv.counter
                        received++
                    }
                }
                stream.cancel()
                // the stream coalesces changes but never skips the last one, and never repeats one
                (received in 2..(finalTv.counter - start.counter).toInt()) shouldBe true
            }
            c.close()
            rs.term shouldBe elections.get() + 1L // term 1 was the initial election
            rs.primary shouldBe rs.members[0]
            rs.members.count { it.state == MemberState.PRIMARY } shouldBe 1
            client.run(rs.members[1], RawClient.hello()).getString("primary").value shouldBe rs.members[0].host
        }
    }
})
