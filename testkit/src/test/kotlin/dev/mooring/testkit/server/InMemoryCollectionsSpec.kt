package dev.mooring.testkit.server

import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import org.bson.BsonDocument

/**
 * The test kit's front end over its data engine (mongo-java-server's memory backend): what goes
 * in comes out with its BSON types, cursors come back whole, engine errors are server errors,
 * features the engine lacks are refused, the `$where` sleep clause never reaches the engine.
 */
class InMemoryCollectionsSpec : FunSpec({
    fun doc(json: String) = BsonDocument.parse(json)
    fun seeded(): InMemoryCollections = InMemoryCollections().also {
        it.execute("d", doc("{insert: 'c', documents: [{_id: 1, x: 11, t: ['a', 'b']}, {_id: 2, x: 22, s: {n: 1}}, {_id: 3, x: 33}]}"))
    }
    fun batch(reply: BsonDocument) = reply.getDocument("cursor").getArray("firstBatch").map { it.asDocument() }
    fun ids(reply: BsonDocument) = batch(reply).map { it["_id"]!!.asInt32().value }
    fun code(reply: BsonDocument?) = reply!!.getNumber("code").intValue()

    test("documents keep their BSON types through the engine") {
        val c = InMemoryCollections()
        val original = doc(
            "{_id: {\$oid: '5f0c1b2a3d4e5f6071829304'}, i: 1, l: {\$numberLong: '2'}, d: 3.5, m: {\$numberDecimal: '4.25'}, " +
                "b: {\$binary: {base64: 'AQID', subType: '00'}}, ts: {\$timestamp: {t: 5, i: 6}}, dt: {\$date: 7}, n: null, " +
                "a: [1, 'x', {k: true}], r: {\$regularExpression: {pattern: '^a', options: 'i'}}}",
        )
        c.execute("d", BsonDocument("insert", org.bson.BsonString("c")).append("documents", org.bson.BsonArray(listOf(original))))
        c.documents("d", "c") shouldBe listOf(original)
    }

    test("a cursor-returning read comes back whole with cursor id 0, whatever the engine's batch") {
        val c = InMemoryCollections()
        val many = (1..250).joinToString(",") { "{_id: $it}" }
        c.execute("d", doc("{insert: 'c', documents: [$many]}"))
        val reply = c.execute("d", doc("{find: 'c', filter: {}}"))!!
        ids(reply) shouldBe (1..250).toList()
        reply.getDocument("cursor").getNumber("id").longValue() shouldBe 0L
        reply.getInt32("ok").value shouldBe 1 // int32, as every reply of the test kit's servers
        batch(c.execute("d", doc("{aggregate: 'c', pipeline: [{\$match: {_id: {\$gt: 100}}}], cursor: {}}"))!!).size shouldBe 150
    }

    test("queries, updates, findAndModify, aggregation and indexes are the engine's") {
        val c = seeded()
        ids(c.execute("d", doc("{find: 'c', filter: {x: {\$gt: 11}}, sort: {x: -1}, skip: 1}"))!!) shouldBe listOf(2)
        c.execute("d", doc("{update: 'c', updates: [{q: {_id: 1}, u: {\$inc: {x: 1}}}]}"))!!.getNumber("nModified").intValue() shouldBe 1
        c.execute("d", doc("{findAndModify: 'c', query: {_id: 1}, update: {\$set: {y: 1}}, new: true}"))!!["value"] shouldBe
            doc("{_id: 1, x: 12, t: ['a', 'b'], y: 1}")
        batch(c.execute("d", doc("{aggregate: 'c', pipeline: [{\$group: {_id: null, n: {\$sum: 1}}}], cursor: {}}"))!!).single()
            .getNumber("n").intValue() shouldBe 3
        c.execute("d", doc("{createIndexes: 'c', indexes: [{key: {x: 1}, name: 'x_1'}]}"))!!.getNumber("numIndexesAfter").intValue() shouldBe 2
        batch(c.execute("d", doc("{listIndexes: 'c', cursor: {}}"))!!).map { it.getString("name").value } shouldBe listOf("_id_", "x_1")
    }

    test("engine errors are server error replies: duplicate keys as write errors, unknown stages with their code") {
        val c = seeded()
        val dup = c.execute("d", doc("{insert: 'c', documents: [{_id: 1}, {_id: 8}]}"))!!
        dup.getArray("writeErrors").single().asDocument().getNumber("code").intValue() shouldBe 11000
        code(c.execute("d", doc("{aggregate: 'c', pipeline: [{\$bogusStage: {}}], cursor: {}}"))) shouldBe 40324
        code(c.execute("d", doc("{dropIndexes: 'c', index: 'nope'}"))) shouldBe 27
        c.execute("d", doc("{drop: 'missing'}"))!!.getInt32("ok").value shouldBe 1 // as MongoDB 7.0, which the test kit reports
        code(c.execute("admin", doc("{renameCollection: 'd.missing', to: 'd.other'}"))) shouldBe 26
    }

    test("writes run statement by statement: a refused statement is a write error, n counts what was applied, ordered stops") {
        val c = seeded()
        val dup = c.execute("d", doc("{insert: 'c', documents: [{_id: 1}]}"))!!
        dup.getNumber("n").intValue() shouldBe 0
        dup.getArray("writeErrors").single().asDocument().getNumber("code").intValue() shouldBe 11000
        val unordered = c.execute("d", doc("{insert: 'c', documents: [{_id: 1}, {_id: 8}, {_id: 2}, {_id: 9}], ordered: false}"))!!
        unordered.getNumber("n").intValue() shouldBe 2
        unordered.getArray("writeErrors").map { it.asDocument().getNumber("index").intValue() } shouldBe listOf(0, 2)
        val bad = c.execute("d", doc("{delete: 'c', deletes: [{q: {_id: 8}, limit: 1}, {q: {\$unsupported: 1}, limit: 1}, {q: {_id: 9}, limit: 1}]}"))!!
        bad.getNumber("ok").intValue() shouldBe 1
        bad.getNumber("n").intValue() shouldBe 1
        bad.getArray("writeErrors").single().asDocument().getNumber("index").intValue() shouldBe 1
        val up = c.execute("d", doc("{update: 'c', updates: [{q: {_id: 2}, u: {\$set: {y: 1}}}, {q: {_id: 7}, u: {\$set: {y: 2}}, upsert: true}]}"))!!
        listOf(up.getNumber("n").intValue(), up.getNumber("nModified").intValue()) shouldBe listOf(2, 1)
        up.getArray("upserted").single() shouldBe doc("{index: 1, _id: 7}")
        code(c.execute("d", doc("{find: 'c', filter: {\$or: true}}"))) shouldBe 2
    }

    test("listIndexes names the collection in its cursor; \$listLocalSessions lists the test kit's (no) cached sessions") {
        val c = seeded()
        c.execute("d", doc("{listIndexes: 'c', cursor: {}}"))!!.getDocument("cursor").getString("ns").value shouldBe "d.c"
        batch(c.execute("admin", doc("{aggregate: 1, pipeline: [{\$listLocalSessions: {}}], cursor: {}}"))!!) shouldBe emptyList()
    }

    test("features the engine lacks are refused as a server that does not know them refuses them") {
        val c = seeded()
        val collation = c.execute("d", doc("{find: 'c', filter: {}, collation: {locale: 'en', strength: 2}}"))!!
        code(collation) shouldBe 40415
        collation.getString("errmsg").value shouldBe "BSON field 'find.collation' is an unknown field."
        c.execute("d", doc("{delete: 'c', deletes: [{q: {}, limit: 0, collation: {locale: 'fr'}}]}"))!!.getString("errmsg").value shouldBe
            "BSON field 'delete.deletes.collation' is an unknown field."
        // let: unknown to MongoDB 4.4 (wire version 9)
        code(c.execute("d", doc("{update: 'c', updates: [{q: {}, u: {\$set: {a: 1}}}], let: {v: 1}}"), maxWireVersion = 9)) shouldBe 40415
        ids(c.execute("d", doc("{find: 'c', filter: {_id: 1}, collation: {locale: 'simple'}}"))!!) shouldBe listOf(1)
        code(c.execute("d", doc("{find: 'c', filter: {}, returnKey: true}"))) shouldBe 40415
        code(c.execute("d", doc("{listCollections: 1, filter: {name: 'c'}, cursor: {}}"))) shouldBe 40415
        code(c.execute("d", doc("{create: 'capped', capped: true, size: 4096}"))) shouldBe 40415
        batch(c.execute("d", doc("{listCollections: 1, filter: {}, cursor: {}}"))!!).map { it.getString("name").value } shouldBe listOf("c")
        // pipeline updates: unknown to MongoDB 4.0 (wire version 7)
        code(c.execute("d", doc("{update: 'c', updates: [{q: {}, u: [{\$set: {a: 1}}]}]}"), maxWireVersion = 7)) shouldBe 14
        code(c.execute("d", doc("{findAndModify: 'c', query: {}, update: [{\$set: {a: 1}}]}"), maxWireVersion = 7)) shouldBe 14
        code(c.execute("d", doc("{mapReduce: 'c', map: 'function() {}', reduce: 'function() {}', out: {inline: 1}}"))) shouldBe 59
        c.documents("d", "c").size shouldBe 3
    }

    test("search index commands and \$listSearchIndexes are refused as by a mongod without Atlas Search (SearchNotEnabled)") {
        val c = seeded()
        for (cmd in listOf(
            "{createSearchIndexes: 'c', indexes: []}", "{updateSearchIndex: 'c', name: 'n', definition: {}}", "{dropSearchIndex: 'c', name: 'n'}",
            "{aggregate: 'c', pipeline: [{\$listSearchIndexes: {}}], cursor: {}}",
        )) {
            val reply = c.execute("d", doc(cmd))!!
            code(reply) shouldBe 31082
            reply.getString("codeName").value shouldBe "SearchNotEnabled"
            reply.getString("errmsg").value.contains("Atlas") shouldBe true
        }
    }

    test("the \$where sleep clause matches every document; the cursor commands and unknown commands are not data commands") {
        val c = seeded()
        ids(c.execute("d", doc("{find: 'c', filter: {\$where: 'sleep(1) || true', x: {\$gte: 22}}}"))!!) shouldBe listOf(2, 3)
        c.execute("d", doc("{getMore: {\$numberLong: '1'}, collection: 'c'}")) shouldBe null
        c.execute("d", doc("{bogus: 1}")) shouldBe null
    }
})
