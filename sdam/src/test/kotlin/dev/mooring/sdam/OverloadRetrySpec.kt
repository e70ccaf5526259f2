package dev.mooring.sdam

import dev.mooring.cmap.MongoCommandException
import dev.mooring.events.ServerAddress
import dev.mooring.sdam.internal.retry.OverloadRetry
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import org.bson.BsonDocument

/** The overload retry policy's pure rules (client-backpressure.md "Overload retry policy"). */
class OverloadRetrySpec : FunSpec({
    val a = ServerAddress("a")
    fun error(json: String) = MongoCommandException(BsonDocument.parse(json), a)

    test("labels: an overload error has SystemOverloadedError; a retryable overload error also RetryableError") {
        val both = error("{ok: 0, code: 462, errmsg: 'x', errorLabels: ['SystemOverloadedError', 'RetryableError']}")
        val overloadOnly = error("{ok: 0, code: 462, errmsg: 'x', errorLabels: ['SystemOverloadedError']}")
        val retryableOnly = error("{ok: 0, code: 2, errmsg: 'x', errorLabels: ['RetryableError']}")
        OverloadRetry.isRetryableOverload(both) shouldBe true
        OverloadRetry.isOverload(overloadOnly) shouldBe true
        OverloadRetry.isRetryableOverload(overloadOnly) shouldBe false
        OverloadRetry.isOverload(retryableOnly) shouldBe false
        OverloadRetry.isRetryableOverload(IllegalStateException()) shouldBe false
    }

    test("backoff = jitter * min(10000, base * 2^attempt), base 100 ms or the error's positive baseBackoffMS") {
        val plain = error("{ok: 0, code: 462, errmsg: 'x'}")
        val withBase = error("{ok: 0, code: 462, errmsg: 'x', baseBackoffMS: 50}")
        val zeroBase = error("{ok: 0, code: 462, errmsg: 'x', baseBackoffMS: 0}")
        val one = OverloadRetry(2, false) { 1.0 }
        one.backoffMillis(1, plain) shouldBe 200
        one.backoffMillis(2, plain) shouldBe 400
        one.backoffMillis(1, withBase) shouldBe 100
        one.backoffMillis(2, withBase) shouldBe 200
        one.backoffMillis(1, zeroBase) shouldBe 200
        one.backoffMillis(10, plain) shouldBe 10_000
        OverloadRetry(2, false) { 0.0 }.backoffMillis(2, plain) shouldBe 0
        OverloadRetry(2, false) { 0.5 }.backoffMillis(1, plain) shouldBe 100
    }
})
