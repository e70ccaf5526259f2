package dev.mooring.integration.testkit.replset

import dev.mooring.testkit.replset.ReplicaSetSimulator
import dev.mooring.testkit.replset.TopologyVersion
import dev.mooring.cmap.MongoCommandException
import dev.mooring.cmap.MongoNetworkException
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.shouldNotBe
import kotlinx.coroutines.async
import kotlinx.coroutines.channels.Channel
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.flow.take
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.launch
import kotlinx.coroutines.withTimeout
import kotlinx.coroutines.withTimeoutOrNull
import org.bson.BsonArray
import org.bson.BsonBoolean
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString
import org.bson.types.ObjectId
import kotlin.time.Duration.Companion.seconds

class AwaitableHelloSpec : FunSpec({
    timeout = 60.seconds.inWholeMilliseconds
    val client = RawClient()
    afterSpec { client.close() }

    test("an awaitable hello with the current topologyVersion waits for a state change") {
        ReplicaSetSimulator.start().use { rs ->
            val s = rs.members[1]
            val c = client.connect(s)
            val tv = s.topologyVersion
            coroutineScope {
                val reply = async { c.command("admin", RawClient.awaitableHello(tv, 600_000), 0) }
                // no change yet: the request must still be waiting
                withTimeoutOrNull(300) { reply.await() } shouldBe null
                rs.stepDown()
                val h = withTimeout(10_000) { reply.await() }
                h.tv().counter shouldBe tv.counter + 1
                h["primary"] shouldBe null
            }
            c.close()
        }
    }

    test("an awaitable hello without a change is answered when maxAwaitTimeMS runs out") {
        ReplicaSetSimulator.start().use { rs ->
            val s = rs.members[2]
            val c = client.connect(s)
            val tv = s.topologyVersion
            val h = withTimeout(10_000) { c.command("admin", RawClient.awaitableHello(tv, 200), 0) }
            h.tv() shouldBe tv
            h["secondary"] shouldBe BsonBoolean.TRUE
            c.close()
        }
    }

    test("a stale topologyVersion (other processId or lower counter) is answered at once") {
        ReplicaSetSimulator.start().use { rs ->
            val s = rs.members[0]
            val c = client.connect(s)
            val first = s.topologyVersion
            rs.elect(rs.members[0])
            val other = withTimeout(10_000) { c.command("admin", RawClient.awaitableHello(TopologyVersion(ObjectId(), 5), 600_000), 0) }
            other.tv() shouldBe s.topologyVersion
            val lower = withTimeout(10_000) { c.command("admin", RawClient.awaitableHello(first, 600_000), 0) }
            lower.tv() shouldBe s.topologyVersion
            c.close()
        }
    }

    test("a counter greater than the server's, or maxAwaitTimeMS without topologyVersion, is an error") {
        ReplicaSetSimulator.start().use { rs ->
            val s = rs.members[0]
            val future = TopologyVersion(s.topologyVersion.processId, s.topologyVersion.counter + 10)
            val e = client.run(s, RawClient.awaitableHello(future, 1_000))
            e.getNumber("ok").intValue() shouldBe 0
            val noTv = client.run(s, RawClient.hello().append("maxAwaitTimeMS", org.bson.BsonInt64(10)))
            noTv.getNumber("ok").intValue() shouldBe 0
        }
    }

    test("exhaust: every state change streams a reply with moreToCome, each with the next topologyVersion") {
        ReplicaSetSimulator.start().use { rs ->
            val s = rs.members[2]
            val c = client.connect(s)
            val replies = Channel<BsonDocument>(Channel.UNLIMITED)
            val tv0 = s.topologyVersion
            coroutineScope {
                val job = launch {
                    c.exhaust("admin", RawClient.awaitableHello(tv0, 600_000), 0).collect { replies.send(it) }
                }
                withTimeoutOrNull(300) { replies.receive() } shouldBe null
                rs.stepDown()
                val r1 = withTimeout(10_000) { replies.receive() }
                r1["primary"] shouldBe null
                r1.tv().counter shouldBe tv0.counter + 1
                rs.elect(rs.members[1])
                val r2 = withTimeout(10_000) { replies.receive() }
                r2.getString("primary").value shouldBe rs.members[1].host
                r2.tv().counter shouldBe tv0.counter + 2
                job.cancel()
            }
            c.close()
        }
    }

    test("exhaust without changes streams one reply per maxAwaitTimeMS") {
        ReplicaSetSimulator.start().use { rs ->
            val s = rs.members[1]
            val c = client.connect(s)
            val tv = s.topologyVersion
            val got = withTimeout(20_000) {
                c.exhaust("admin", RawClient.awaitableHello(tv, 100), 0).take(3).toList()
            }
            got.size shouldBe 3
            got.forEach { it.tv() shouldBe tv }
            c.close()
        }
    }

    test("the topologyVersion flow lets a test wait for a member's change") {
        ReplicaSetSimulator.start().use { rs ->
            val m = rs.members[0]
            val tv = m.topologyVersion
            coroutineScope {
                val changed = async { m.topologyVersions.first { it != tv } }
                rs.setRecovering(rs.members[1], true)
                withTimeout(10_000) { changed.await() } shouldNotBe tv
            }
        }
    }

    fun failHello(mode: BsonDocument, data: BsonDocument) = BsonDocument("configureFailPoint", BsonString("failCommand"))
        .append("mode", mode)
        .append("data", data.append("failCommands", BsonArray(listOf(BsonString("hello")))))

    test("fail points fire on every exhaust reply, as mongod re-runs the hello: closeConnection drops the stream") {
        ReplicaSetSimulator.start().use { rs ->
            val s = rs.members[1]
            val c = client.connect(s)
            s.configureFailPoint(failHello(BsonDocument("skip", BsonInt32(1)), BsonDocument("closeConnection", BsonBoolean.TRUE)))
            val seen = ArrayList<BsonDocument>()
            shouldThrow<MongoNetworkException> {
                withTimeout(20_000) {
                    c.exhaust("admin", RawClient.awaitableHello(s.topologyVersion, 100), 0).collect { seen += it }
                }
            }
            seen.size shouldBe 1
            c.close()
        }
    }

    test("fail points fire on every exhaust reply: an error code ends the stream with that error") {
        ReplicaSetSimulator.start().use { rs ->
            val s = rs.members[2]
            val c = client.connect(s)
            s.configureFailPoint(failHello(BsonDocument("skip", BsonInt32(2)), BsonDocument("errorCode", BsonInt32(91))))
            val seen = ArrayList<BsonDocument>()
            val e = shouldThrow<MongoCommandException> {
                withTimeout(20_000) {
                    c.exhaust("admin", RawClient.awaitableHello(s.topologyVersion, 100), 0).collect { seen += it }
                }
            }
            e.code shouldBe 91
            seen.size shouldBe 2
            c.close()
        }
    }
})
