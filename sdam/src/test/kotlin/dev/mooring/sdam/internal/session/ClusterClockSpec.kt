package dev.mooring.sdam.internal.session

import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import org.bson.BsonBinary
import org.bson.BsonDocument
import org.bson.BsonInt64
import org.bson.BsonString
import org.bson.BsonTimestamp

/** driver-sessions.md "Receiving the current cluster time": cluster times compare by their timestamp only. */
class ClusterClockSpec : FunSpec({
    fun time(seconds: Int, inc: Int, keyId: Long = 1) = BsonDocument("clusterTime", BsonTimestamp(seconds, inc))
        .append("signature", BsonDocument("hash", BsonBinary(ByteArray(20))).append("keyId", BsonInt64(keyId)))

    test("advances only to a higher timestamp: seconds first, then the increment; the signature plays no part") {
        val clock = ClusterClock()
        clock.current shouldBe null
        clock.advance(time(10, 2)) shouldBe true
        clock.advance(time(10, 1)) shouldBe false
        clock.advance(time(10, 2, keyId = 9)) shouldBe false // equal timestamp, other signature: kept
        clock.current shouldBe time(10, 2)
        clock.advance(time(10, 3)) shouldBe true
        clock.advance(time(11, 0)) shouldBe true
        clock.current shouldBe time(11, 0)
    }

    test("timestamps compare unsigned (seconds past 2038 are higher, not negative)") {
        val clock = ClusterClock()
        clock.advance(time(Int.MAX_VALUE, 1))
        clock.advance(time(Int.MIN_VALUE, 1)) shouldBe true // 2^31 seconds, unsigned
        ClusterClock.higher(time(Int.MAX_VALUE, 1), time(-1, 0)) shouldBe time(-1, 0)
    }

    test("anything that is not a cluster time leaves the clock as it is") {
        val clock = ClusterClock()
        clock.advance(null) shouldBe false
        clock.advance(BsonString("x")) shouldBe false
        clock.advance(BsonDocument("clusterTime", BsonString("x"))) shouldBe false
        clock.current shouldBe null
        ClusterClock.higher(null, time(1, 1)) shouldBe time(1, 1)
        ClusterClock.higher(time(1, 1), null) shouldBe time(1, 1)
    }
})
