package dev.mooring.testkit.server

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import org.bson.BsonDocument

/** The test kit's in-memory data commands: filters, update operators, cursors, findAndModify, aggregation, indexes. */
class InMemoryCollectionsSpec : FunSpec({
    fun doc(json: String) = BsonDocument.parse(json)
    fun seeded(): InMemoryCollections = InMemoryCollections().also {
        it.execute("d", doc("{insert: 'c', documents: [{_id: 1, x: 11, t: ['a', 'b']}, {_id: 2, x: 22, s: {n: 1}}, {_id: 3, x: 33}]}"))
    }
    fun ids(reply: BsonDocument, batch: String = "firstBatch") = reply.getDocument("cursor").getArray(batch).map { it.asDocument()["_id"]!!.asInt32().value }

    test("filters: comparison, \$in/\$nin, \$exists, \$not, dotted paths, array elements, logical operators") {
        val c = seeded()
        ids(c.execute("d", doc("{find: 'c', filter: {x: {\$gt: 11, \$lte: 33}}}"))!!) shouldBe listOf(2, 3)
        ids(c.execute("d", doc("{find: 'c', filter: {_id: {\$in: [1, 3]}}}"))!!) shouldBe listOf(1, 3)
        ids(c.execute("d", doc("{find: 'c', filter: {_id: {\$nin: [1, 3]}}}"))!!) shouldBe listOf(2)
        ids(c.execute("d", doc("{find: 'c', filter: {s: {\$exists: true}}}"))!!) shouldBe listOf(2)
        ids(c.execute("d", doc("{find: 'c', filter: {'s.n': 1}}"))!!) shouldBe listOf(2)
        ids(c.execute("d", doc("{find: 'c', filter: {t: 'b'}}"))!!) shouldBe listOf(1)
        ids(c.execute("d", doc("{find: 'c', filter: {x: {\$not: {\$gt: 11}}}}"))!!) shouldBe listOf(1)
        ids(c.execute("d", doc("{find: 'c', filter: {\$or: [{_id: 1}, {x: 33}]}}"))!!) shouldBe listOf(1, 3)
        c.execute("d", doc("{find: 'c', filter: {x: {\$regexish: 1}}}"))!!.getInt32("code").value shouldBe 2
    }

    test("find: sort, skip, limit, projection and batchSize with getMore and killCursors") {
        val c = seeded()
        ids(c.execute("d", doc("{find: 'c', filter: {}, sort: {x: -1}, skip: 1, limit: 1}"))!!) shouldBe listOf(2)
        c.execute("d", doc("{find: 'c', filter: {_id: 1}, projection: {x: 1}}"))!!.getDocument("cursor").getArray("firstBatch").single() shouldBe doc("{_id: 1, x: 11}")
        c.execute("d", doc("{find: 'c', filter: {_id: 1}, projection: {_id: 0, t: 0}}"))!!.getDocument("cursor").getArray("firstBatch").single() shouldBe doc("{x: 11}")
        val first = c.execute("d", doc("{find: 'c', filter: {}, batchSize: 2}"))!!
        ids(first) shouldBe listOf(1, 2)
        val id = first.getDocument("cursor").getInt64("id").value
        (id != 0L) shouldBe true
        val more = c.execute("d", doc("{getMore: {\$numberLong: '$id'}, collection: 'c'}"))!!
        ids(more, "nextBatch") shouldBe listOf(3)
        more.getDocument("cursor").getInt64("id").value shouldBe 0L
        c.execute("d", doc("{getMore: {\$numberLong: '$id'}, collection: 'c'}"))!!.getInt32("code").value shouldBe 43
        val open = c.execute("d", doc("{find: 'c', filter: {}, batchSize: 1}"))!!.getDocument("cursor").getInt64("id").value
        c.execute("d", doc("{killCursors: 'c', cursors: [{\$numberLong: '$open'}]}"))!!.getArray("cursorsKilled").size shouldBe 1
    }

    test("update operators, upserts with the filter's fields, and write errors for duplicate keys") {
        val c = seeded()
        c.execute("d", doc("{update: 'c', updates: [{q: {_id: 1}, u: {\$inc: {x: 1}, \$unset: {t: 1}, \$set: {'s.k': 'v'}}}]}"))
        c.documents("d", "c").first() shouldBe doc("{_id: 1, x: 12, s: {k: 'v'}}")
        val up = c.execute("d", doc("{update: 'c', updates: [{q: {_id: 7}, u: {\$set: {x: 1}, \$setOnInsert: {y: 2}}, upsert: true}]}"))!!
        up.getArray("upserted").single().asDocument()["_id"] shouldBe doc("{v: 7}")["v"]
        c.documents("d", "c").last() shouldBe doc("{_id: 7, x: 1, y: 2}")
        c.execute("d", doc("{update: 'c', updates: [{q: {}, u: {\$mul: {x: 2}}, multi: true}]}"))!!.getInt32("nModified").value shouldBe 4
        val dup = c.execute("d", doc("{insert: 'c', documents: [{_id: 1}, {_id: 8}]}"))!!
        dup.getArray("writeErrors").single().asDocument().getInt32("code").value shouldBe 11000
        dup.getInt32("n").value shouldBe 0
        c.execute("d", doc("{insert: 'c', documents: [{_id: 1}, {_id: 8}], ordered: false}"))!!.getInt32("n").value shouldBe 1
        shouldThrow<IllegalArgumentException> { DocumentUpdate.apply(doc("{_id: 1}"), doc("{\$set: {a: 1}, b: 2}")) }
    }

    test("updates given as a pipeline (MongoDB 4.2+): findAndModify and update, \$set with field references, \$unset, \$replaceWith") {
        val c = seeded()
        val r = c.execute("d", doc("{findAndModify: 'c', query: {_id: 1}, update: [{\$set: {y: '\$x', z: {\$literal: '\$x'}}}, {\$unset: 't'}], new: true}"))!!
        r["value"] shouldBe doc("{_id: 1, x: 11, y: 11, z: '\$x'}")
        c.execute("d", doc("{update: 'c', updates: [{q: {_id: 2}, u: [{\$replaceWith: {k: 1}}]}]}"))!!.getInt32("nModified").value shouldBe 1
        c.documents("d", "c")[1] shouldBe doc("{_id: 2, k: 1}")
        c.execute("d", doc("{update: 'c', updates: [{q: {}, u: [{\$set: {m: true}}], multi: true}]}"))!!.getInt32("nModified").value shouldBe 3
        // a pipeline an update cannot use fails the whole command, even when no document matches: mongod parses it first
        c.execute("d", doc("{update: 'c', updates: [{q: {_id: 3}, u: [{\$group: {_id: 1}}]}]}"))!!.getInt32("code").value shouldBe 2
        c.execute("d", doc("{update: 'c', updates: [{q: {_id: 99}, u: [{\$invalidStage: true}]}]}"))!!.getInt32("code").value shouldBe 2
        c.execute("d", doc("{findAndModify: 'c', query: {_id: 99}, update: [{\$invalidStage: true}]}"))!!.getInt32("code").value shouldBe 2
    }

    test("findAndModify, count, distinct, aggregate with \$group and \$out, indexes and listCollections") {
        val c = seeded()
        c.execute("d", doc("{findAndModify: 'c', query: {x: {\$gt: 11}}, sort: {x: -1}, update: {\$inc: {x: 1}}, new: true}"))!!["value"] shouldBe doc("{_id: 3, x: 34}")
        c.execute("d", doc("{findAndModify: 'c', query: {_id: 2}, remove: true}"))!!["value"]!!.asDocument()["_id"] shouldBe doc("{v: 2}")["v"]
        c.execute("d", doc("{count: 'c', query: {}}"))!!.getInt32("n").value shouldBe 2
        c.execute("d", doc("{distinct: 'c', key: 't', query: {}}"))!!.getArray("values").map { it.asString().value } shouldBe listOf("a", "b")
        val counted = c.execute("d", doc("{aggregate: 'c', pipeline: [{\$match: {}}, {\$group: {_id: 1, n: {\$sum: 1}}}], cursor: {}}"))!!
        counted.getDocument("cursor").getArray("firstBatch").single() shouldBe doc("{_id: 1, n: 2}")
        c.execute("d", doc("{aggregate: 'c', pipeline: [{\$sort: {x: 1}}, {\$out: 'copy'}], cursor: {}}"))
        c.documents("d", "copy").size shouldBe 2
        c.execute("d", doc("{createIndexes: 'c', indexes: [{key: {x: 1}, name: 'x_1'}]}"))!!.getInt32("numIndexesAfter").value shouldBe 2
        c.execute("d", doc("{listIndexes: 'c', cursor: {}}"))!!.getDocument("cursor").getArray("firstBatch").map { it.asDocument().getString("name").value } shouldBe listOf("_id_", "x_1")
        c.execute("d", doc("{dropIndexes: 'c', index: 'x_1'}"))!!.getInt32("ok").value shouldBe 1
        c.execute("d", doc("{dropIndexes: 'c', index: 'x_1'}"))!!.getInt32("code").value shouldBe 27
        c.execute("d", doc("{listCollections: 1, nameOnly: true, cursor: {}}"))!!.getDocument("cursor").getArray("firstBatch")
            .map { it.asDocument().getString("name").value } shouldBe listOf("c", "copy")
        c.execute("d", doc("{listIndexes: 'none', cursor: {}}"))!!.getInt32("code").value shouldBe 26
        c.execute("d", doc("{bogus: 1}")) shouldBe null
    }

    test("the _id index answers {_id: v} finds and duplicate checks, and follows updates, deletes, replacements and \$out") {
        val c = InMemoryCollections()
        c.execute("d", doc("{insert: 'c', documents: [{_id: 1, x: 1}, {_id: 'a', x: 2}, {_id: {k: 1}, x: 3}]}"))
        ids(c.execute("d", doc("{find: 'c', filter: {_id: 1}}"))!!) shouldBe listOf(1)
        ids(c.execute("d", doc("{find: 'c', filter: {_id: {\$numberLong: '1'}}}"))!!) shouldBe listOf(1) // numbers by value
        c.execute("d", doc("{find: 'c', filter: {_id: 2}}"))!!.getDocument("cursor").getArray("firstBatch").size shouldBe 0
        c.execute("d", doc("{find: 'c', filter: {_id: {k: 1}}}"))!!.getDocument("cursor").getArray("firstBatch").size shouldBe 1 // scanned
        c.execute("d", doc("{insert: 'c', documents: [{_id: 1.0}]}"))!!.getArray("writeErrors").single().asDocument().getInt32("code").value shouldBe 11000
        c.execute("d", doc("{update: 'c', updates: [{q: {_id: 1}, u: {_id: 1, x: 9}}]}"))
        c.execute("d", doc("{find: 'c', filter: {_id: 1}}"))!!.getDocument("cursor").getArray("firstBatch").single().asDocument().getInt32("x").value shouldBe 9
        c.execute("d", doc("{delete: 'c', deletes: [{q: {_id: 1}, limit: 1}]}"))
        c.execute("d", doc("{find: 'c', filter: {_id: 1}}"))!!.getDocument("cursor").getArray("firstBatch").size shouldBe 0
        c.execute("d", doc("{insert: 'c', documents: [{_id: 1, x: 10}]}"))!!.getInt32("n").value shouldBe 1
        c.execute("d", doc("{aggregate: 'c', pipeline: [{\$match: {x: 10}}, {\$out: 'o'}], cursor: {}}"))
        ids(c.execute("d", doc("{find: 'o', filter: {_id: 1}}"))!!) shouldBe listOf(1)
    }
})
