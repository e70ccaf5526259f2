package dev.mooring.sdam.internal.retry

import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.sdam.WriteConcern
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.types.shouldBeSameInstanceAs
import org.bson.BsonDocument

/** The cluster's write concern (URI w, wTimeoutMS, journal) on a write's command. */
class DefaultWriteConcernSpec : FunSpec({
    fun concern(uriOptions: String): WriteConcern = MongoClusterSettings.fromUri("mongodb://h/?$uriOptions").writeConcern
    val insert = BsonDocument.parse("{insert: 'c', documents: [{}]}")

    test("w, wtimeout and j from the URI are added to a command without a writeConcern; the command itself is untouched") {
        val sent = DefaultWriteConcern.applyTo(insert, concern("w=majority&wTimeoutMS=500&journal=true"), underTimeoutMS = false)
        sent["writeConcern"] shouldBe BsonDocument.parse("{w: 'majority', j: true, wtimeout: {\$numberLong: '500'}}")
        insert.containsKey("writeConcern") shouldBe false
        DefaultWriteConcern.applyTo(insert, concern("w=2"), false)["writeConcern"] shouldBe BsonDocument.parse("{w: 2}")
    }

    test("a command's own writeConcern wins, and the server default adds nothing") {
        val own = BsonDocument.parse("{insert: 'c', documents: [{}], writeConcern: {w: 1}}")
        DefaultWriteConcern.applyTo(own, concern("w=majority"), false) shouldBeSameInstanceAs own
        DefaultWriteConcern.applyTo(insert, WriteConcern.DEFAULT, false) shouldBeSameInstanceAs insert
    }

    test("under timeoutMS the wtimeout is left out (CSOT), and a wTimeoutMS alone then adds nothing") {
        DefaultWriteConcern.applyTo(insert, concern("w=majority&wTimeoutMS=500"), underTimeoutMS = true)["writeConcern"] shouldBe
            BsonDocument.parse("{w: 'majority'}")
        DefaultWriteConcern.applyTo(insert, concern("wTimeoutMS=500"), underTimeoutMS = true) shouldBeSameInstanceAs insert
    }

    test("w=0 from the URI makes the write unacknowledged") {
        RetryableWrite.isUnacknowledged(DefaultWriteConcern.applyTo(insert, concern("w=0"), false)) shouldBe true
    }
})
