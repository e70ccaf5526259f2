package dev.mooring.sdam.internal.csot

import dev.mooring.cmap.MongoCommandException
import dev.mooring.events.ServerAddress
import dev.mooring.sdam.MongoOperationTimeoutException
import dev.mooring.sdam.ServerDescription
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.longs.shouldBeGreaterThan
import io.kotest.matchers.longs.shouldBeLessThanOrEqual
import io.kotest.matchers.shouldBe
import io.kotest.matchers.types.shouldBeInstanceOf
import io.kotest.matchers.types.shouldBeSameInstanceAs
import org.bson.BsonDocument

/** client-side-operations-timeout.md: maxTimeMS from the remaining time and the RTT, and the MaxTimeMSExpired transformations. */
class OperationTimeoutSpec : FunSpec({
    val address = ServerAddress("127.0.0.1", 27017)
    fun server(minRtt: Double?) = ServerDescription.fromHello(address, BsonDocument.parse("{ok: 1, isWritablePrimary: true, maxWireVersion: 21}"), 1.0, minRtt)
    val ping = BsonDocument.parse("{ping: 1}")
    fun commandError(code: Int) = MongoCommandException(BsonDocument.parse("{ok: 0, code: $code, codeName: 'X', errmsg: 'e'}"), address)

    test("a positive timeoutMS appends maxTimeMS = remaining - minRoundTripTime, leaving the command itself unchanged") {
        val timeout = OperationTimeout.start(60_000)
        val sent = timeout.withMaxTimeMS(ping, server(10.2))
        val maxTimeMS = sent.getInt64("maxTimeMS").value
        maxTimeMS shouldBeLessThanOrEqual 60_000L - 11
        maxTimeMS shouldBeGreaterThan 50_000L
        ping.containsKey("maxTimeMS") shouldBe false
    }

    test("a command is not sent when the remaining time does not exceed the minimum round trip time") {
        val timeout = OperationTimeout.start(60_000)
        shouldThrow<MongoOperationTimeoutException> { timeout.withMaxTimeMS(ping, server(120_000.0)) }
    }

    test("without a deadline (unset or 0) no maxTimeMS is added") {
        OperationTimeout.start(null).withMaxTimeMS(ping, server(1.0)) shouldBeSameInstanceAs ping
        OperationTimeout.start(0).withMaxTimeMS(ping, server(1.0)) shouldBeSameInstanceAs ping
        OperationTimeout.start(0).remainingMS() shouldBe null
        shouldThrow<IllegalArgumentException> { OperationTimeout.start(-1) }
    }

    test("with timeoutMS set (0 included), only code 50 becomes a timeout error wrapping the server's error") {
        val maxTime = commandError(50)
        val translated = OperationTimeout.start(0).translate(maxTime)
        translated.shouldBeInstanceOf<MongoOperationTimeoutException>()
        translated.cause shouldBeSameInstanceAs maxTime
        translated.message!!.contains(maxTime.message!!) shouldBe true
        OperationTimeout.start(0).translate(commandError(11600)).shouldBeInstanceOf<MongoCommandException>()
        OperationTimeout.start(null).translate(maxTime) shouldBeSameInstanceAs maxTime
    }

    test("with timeoutMS set, a MaxTimeMSExpired write error or write concern error in an ok: 1 reply is a timeout error") {
        val set = OperationTimeout.start(1_000)
        shouldThrow<MongoOperationTimeoutException> { set.checkReply(BsonDocument.parse("{ok: 1, writeErrors: [{index: 0, code: 50, errmsg: 'x'}]}")) }
        shouldThrow<MongoOperationTimeoutException> { set.checkReply(BsonDocument.parse("{ok: 1, writeConcernError: {code: 50, codeName: 'MaxTimeMSExpired'}}")) }
        val other = BsonDocument.parse("{ok: 1, writeConcernError: {code: 64}}")
        set.checkReply(other) shouldBeSameInstanceAs other
        val unset = BsonDocument.parse("{ok: 1, writeConcernError: {code: 50}}")
        OperationTimeout.start(null).checkReply(unset) shouldBeSameInstanceAs unset
    }
})
