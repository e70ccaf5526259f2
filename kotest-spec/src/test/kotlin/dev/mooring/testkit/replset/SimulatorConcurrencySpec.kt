package dev.mooring.testkit.replset

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
            coroutineScope {
                val stream = launch {
                    c.exhaust("admin", RawClient.awaitableHello(watched.topologyVersion, 600_000), 0).collect { replies.send(it) }
                }
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
                var last = -1L
                withTimeout(20_000) {
                    while (last < finalTv.counter) {
                        val tv = replies.receive().tv()
                        (tv.counter > last) shouldBe true
                        last = tv.counter
                    }
                }
                stream.cancel()
            }
            c.close()
            rs.term shouldBe elections.get() + 1L // term 1 was the initial election
            rs.primary shouldBe rs.members[0]
            rs.members.count { it.state == MemberState.PRIMARY } shouldBe 1
            client.run(rs.members[1], RawClient.hello()).getString("primary").value shouldBe rs.members[0].host
        }
    }
})
