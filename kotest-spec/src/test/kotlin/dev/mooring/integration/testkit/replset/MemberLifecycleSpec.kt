package dev.mooring.integration.testkit.replset

import dev.mooring.testkit.replset.MemberState
import dev.mooring.testkit.replset.ReplicaSetSimulator
import dev.mooring.testkit.replset.SimulatedMember
import dev.mooring.cmap.MongoNetworkException
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.shouldNotBe
import kotlinx.coroutines.async
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.withTimeout
import kotlinx.coroutines.withTimeoutOrNull
import org.bson.BsonBoolean
import org.bson.BsonDocument
import org.bson.BsonInt32
import java.net.ConnectException
import java.net.InetSocketAddress
import java.net.Socket
import kotlin.time.Duration.Companion.seconds

class MemberLifecycleSpec : FunSpec({
    timeout = 60.seconds.inWholeMilliseconds
    val client = RawClient()
    afterSpec { client.close() }

    fun refuses(m: SimulatedMember): Boolean = try {
        Socket().use { it.connect(InetSocketAddress("127.0.0.1", m.port), 2_000) }
        false
    } catch (_: ConnectException) {
        true
    }

    test("kill closes the listener and open connections; restart listens on the same port with a new processId") {
        ReplicaSetSimulator.start().use { rs ->
            val s = rs.members[1]
            val c = client.connect(s)
            val before = s.topologyVersion
            rs.kill(s)
            s.isUp shouldBe false
            refuses(s) shouldBe true
            shouldThrow<MongoNetworkException> { c.command("admin", BsonDocument("ping", BsonInt32(1))) }
            shouldThrow<MongoNetworkException> { client.connect(s) }
            rs.kill(s) // idempotent
            rs.restart(s)
            s.isUp shouldBe true
            s.port shouldBe rs.members[1].port
            val h = client.run(s, RawClient.hello())
            h.getString("me").value shouldBe s.host
            h["secondary"] shouldBe BsonBoolean.TRUE
            h.tv().processId shouldNotBe before.processId
            h.tv().counter shouldBe 0L
            shouldThrow<IllegalStateException> { rs.restart(s) }
        }
    }

    test("killing the primary leaves no primary; restarted it comes back as a secondary") {
        ReplicaSetSimulator.start().use { rs ->
            val p = rs.members[0]
            rs.kill(p)
            rs.primary shouldBe null
            client.run(rs.members[1], RawClient.hello())["primary"] shouldBe null
            shouldThrow<IllegalStateException> { rs.elect(p) }
            rs.restart(p)
            p.state shouldBe MemberState.SECONDARY
            rs.elect(p)
            client.run(rs.members[2], RawClient.hello()).getString("primary").value shouldBe p.host
        }
    }

    test("a partitioned member accepts and reads but answers only after heal") {
        ReplicaSetSimulator.start().use { rs ->
            val s = rs.members[2]
            val c = client.connect(s)
            rs.partition(s)
            s.isPartitioned shouldBe true
            coroutineScope {
                val pending = async { c.command("admin", BsonDocument("ping", BsonInt32(1)), 0) }
                withTimeoutOrNull(500) { pending.await() } shouldBe null
                // new connections are accepted, but their handshake gets no answer
                refuses(s) shouldBe false
                val other = async { client.connect(s) }
                withTimeoutOrNull(300) { other.await() } shouldBe null
                rs.heal(s)
                withTimeout(10_000) { pending.await() }.getNumber("ok").intValue() shouldBe 1
                withTimeout(10_000) { other.await() }.description shouldNotBe null
            }
            c.close()
        }
    }

    test("close stops every member; controls then throw") {
        val rs = ReplicaSetSimulator.start()
        val m = rs.members[0]
        client.run(m, BsonDocument("ping", BsonInt32(1))).getNumber("ok").intValue() shouldBe 1
        rs.close()
        rs.members.forEach { refuses(it) shouldBe true }
        shouldThrow<IllegalStateException> { rs.elect(rs.members[1]) }
        shouldThrow<IllegalStateException> { rs.restart(m) }
        rs.close()
    }
})
