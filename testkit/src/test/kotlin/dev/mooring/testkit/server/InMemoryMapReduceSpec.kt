package dev.mooring.testkit.server

import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import org.bson.BsonDocument

/** The test kit's inline mapReduce runs the command's JavaScript as mongod does. */
class InMemoryMapReduceSpec : FunSpec({
    fun doc(json: String) = BsonDocument.parse(json)
    fun seeded() = InMemoryCollections().also {
        it.execute("db", doc("""{insert: "c", documents: [{_id: 1, k: "a", x: 1}, {_id: 2, k: "b", x: 2}, {_id: 3, k: "a", x: 3}, {_id: 4, k: "b", x: 10}]}"""))
    }

    test("map emits per document, reduce folds the keys with several values, results in key order") {
        val reply = seeded().execute("db", doc("""{mapReduce: "c", map: {${'$'}code: "function() { emit(this.k, this.x) }"},
            reduce: {${'$'}code: "function(key, values) { return values.reduce((a, b) => a + b) }"}, out: {inline: 1}}"""))!!
        reply.getArray("results") shouldBe doc("""{r: [{_id: "a", value: 4}, {_id: "b", value: 12}]}""").getArray("r")
    }

    test("query, sort, limit, finalize and scope apply") {
        val reply = seeded().execute("db", doc("""{mapReduce: "c", map: {${'$'}code: "function() { emit(this.k, this.x * factor) }"},
            reduce: {${'$'}code: "function(key, values) { return values.reduce((a, b) => a + b) }"},
            finalize: {${'$'}code: "function(key, value) { return {total: value} }"}, scope: {factor: 2},
            query: {x: {${'$'}lt: 10}}, sort: {x: -1}, limit: 2, out: {inline: 1}}"""))!!
        // x < 10 sorted descending, first two: _id 3 (a, 3) and _id 2 (b, 2)
        reply.getArray("results") shouldBe doc("""{r: [{_id: "a", value: {total: 6}}, {_id: "b", value: {total: 4}}]}""").getArray("r")
    }

    test("another output and a JavaScript error are refused with mongod's codes") {
        val c = seeded()
        c.execute("db", doc("""{mapReduce: "c", map: "function() {}", reduce: "function() {}", out: "coll2"}"""))!!.getInt32("code").value shouldBe 2
        c.execute("db", doc("""{mapReduce: "c", map: "function() { undefinedCall() }", reduce: "function() {}", out: {inline: 1}}"""))!!
            .getInt32("code").value shouldBe 139
    }
})
