package dev.mooring.testkit.server

import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.shouldNotBe
import org.bson.BsonBinary
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonInt64
import org.bson.BsonString
import org.bson.BsonTimestamp

/** The test kit's logical clock checks and advances cluster times as mongod does. */
class ClusterTimeKeeperSpec : FunSpec({
    fun ping(clusterTime: BsonDocument?) = BsonDocument("ping", BsonInt32(1)).also { if (clusterTime != null) it["\$clusterTime"] = clusterTime }
    fun time(d: BsonDocument) = d.getTimestamp("clusterTime")

    test("replies carry a signed \$clusterTime and operationTime; a write ticks the clock") {
        val clock = ClusterTimeKeeper()
        val before = clock.stamp(WireServer.ok())
        before.getDocument("\$clusterTime").getDocument("signature").getInt64("keyId").value shouldBe clock.keyId
        before["operationTime"] shouldBe time(before.getDocument("\$clusterTime"))
        clock.tick()
        val after = clock.current()
        (time(after).value > time(before.getDocument("\$clusterTime")).value) shouldBe true
    }

    test("a valid gossiped cluster time passes and advances the clock when higher; a lower one leaves it") {
        val clock = ClusterTimeKeeper()
        val now = time(clock.current())
        val ahead = clock.signed(BsonTimestamp(now.time + 100, 1))
        clock.receive(ping(ahead)) shouldBe null
        clock.current() shouldBe ahead
        clock.receive(ping(clock.signed(BsonTimestamp(now.time, 1)))) shouldBe null
        clock.current() shouldBe ahead
        clock.receive(ping(null)) shouldBe null
    }

    test("a malformed, foreign or forged cluster time is refused with mongod's codes") {
        val clock = ClusterTimeKeeper()
        val other = ClusterTimeKeeper()
        clock.receive(ping(BsonDocument("clusterTime", BsonTimestamp(1, 1))))!!.getInt32("code").value shouldBe 2
        clock.receive(ping(clock.current().append("clusterTime", BsonString("x"))))!!.getInt32("code").value shouldBe 14
        val foreign = other.current().also { it.getDocument("signature")["keyId"] = BsonInt64(clock.keyId + 1) }
        clock.receive(ping(foreign))!!.getInt32("code").value shouldBe 211
        val forged = clock.current().also { it.getDocument("signature")["hash"] = BsonBinary(ByteArray(20)) }
        val refused = clock.receive(ping(forged))!!
        refused.getInt32("code").value shouldBe 204
        refused.getString("codeName").value shouldBe "TimeProofMismatch"
        clock.current() shouldNotBe forged
    }
})
