package dev.mooring.testkit.server

import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import org.bson.BsonDocument

/**
 * What the test kit composes from its data engine's own parts: `let` variables bound in filters,
 * pipelines and pipeline updates ([LetVariables]), updates given as a pipeline run on the
 * engine's aggregation stages ([PipelineUpdates]), the `sort` of an update statement (MongoDB
 * 8.0) and findAndModify with a pipeline ([ComposedUpdates]); and a server simulating an older
 * version refusing them as that version does.
 */
class LetAndPipelineUpdatesSpec : FunSpec({
    fun doc(json: String) = BsonDocument.parse(json)
    fun seeded(): InMemoryCollections = InMemoryCollections().also {
        it.execute("d", doc("{insert: 'c', documents: [{_id: 1, x: 11, t: {u: {v: 1}}}, {_id: 2, x: 22}, {_id: 3, x: 33}]}"))
    }
    fun batch(reply: BsonDocument?) = reply!!.getDocument("cursor").getArray("firstBatch").map { it.asDocument() }
    fun code(reply: BsonDocument?) = reply!!.getNumber("code").intValue()
    fun counts(reply: BsonDocument?) = listOf(reply!!.getNumber("n").intValue(), reply.getNumber("nModified").intValue())

    test("an update pipeline is stored: \$set, \$replaceRoot (the _id kept), \$unset, \$replaceWith; multi updates every match") {
        val c = seeded()
        counts(c.execute("d", doc("{update: 'c', updates: [{q: {_id: 1}, u: [{\$replaceRoot: {newRoot: '\$t'}}, {\$addFields: {foo: 1}}]}]}"))) shouldBe listOf(1, 1)
        c.documents("d", "c")[0] shouldBe doc("{_id: 1, u: {v: 1}, foo: 1}")
        counts(c.execute("d", doc("{update: 'c', updates: [{q: {_id: {\$gt: 1}}, u: [{\$set: {y: {\$add: ['\$x', 1]}}}, {\$unset: 'x'}], multi: true}]}"))) shouldBe listOf(2, 2)
        c.documents("d", "c").drop(1) shouldBe listOf(doc("{_id: 2, y: 23}"), doc("{_id: 3, y: 34}"))
        counts(c.execute("d", doc("{update: 'c', updates: [{q: {_id: 2}, u: [{\$replaceWith: {_id: 2, y: 23}}]}]}"))) shouldBe listOf(1, 0)
    }

    test("a pipeline upsert stores the pipeline applied to the filter's equality fields; a stage mongod refuses in an update is InvalidOptions") {
        val c = seeded()
        val up = c.execute("d", doc("{update: 'c', updates: [{q: {_id: 9, k: 'a'}, u: [{\$set: {z: {\$concat: ['\$k', 'b']}}}], upsert: true}]}"))!!
        up.getArray("upserted").single() shouldBe doc("{index: 0, _id: 9}")
        c.documents("d", "c").last() shouldBe doc("{_id: 9, k: 'a', z: 'ab'}")
        val refused = c.execute("d", doc("{update: 'c', updates: [{q: {}, u: [{\$match: {}}]}]}"))!!
        // the whole command fails, as mongod answers it (command-logging's operation-id.json expects "Command failed")
        code(refused) shouldBe 72
        refused.getNumber("ok").intValue() shouldBe 0
        code(c.execute("d", doc("{findAndModify: 'c', query: {}, update: [{\$invalidOperator: true}]}"))) shouldBe 72
    }

    test("findAndModify with a pipeline returns the document before or after, and upserts") {
        val c = seeded()
        c.execute("d", doc("{findAndModify: 'c', query: {x: {\$gt: 11}}, sort: {x: -1}, update: [{\$set: {x: 0}}], new: true}"))!!["value"] shouldBe
            doc("{_id: 3, x: 0}")
        c.execute("d", doc("{findAndModify: 'c', query: {_id: 2}, update: [{\$set: {x: 5}}], fields: {x: 1}}"))!!["value"] shouldBe doc("{_id: 2, x: 22}")
        c.documents("d", "c")[1] shouldBe doc("{_id: 2, x: 5}")
        val up = c.execute("d", doc("{findAndModify: 'c', query: {_id: 7}, update: [{\$set: {w: 1}}], upsert: true, new: true}"))!!
        up["value"] shouldBe doc("{_id: 7, w: 1}")
        up.getDocument("lastErrorObject")["upserted"] shouldBe doc("{_id: 7}")["_id"]
    }

    test("let variables are bound in \$expr filters, pipelines and pipeline updates; a pipeline's own bindings shadow them") {
        val c = seeded()
        batch(c.execute("d", doc("{find: 'c', filter: {\$expr: {\$eq: ['\$_id', '\$\$id']}}, let: {id: 2}}"))).map { it["_id"] } shouldBe
            listOf(doc("{v: 2}")["v"])
        val projected = batch(
            c.execute(
                "d",
                doc(
                    "{aggregate: 'c', pipeline: [{\$match: {\$expr: {\$eq: ['\$_id', '\$\$id']}}}, {\$project: {_id: 0, x: '\$\$x', y: '\$\$y', " +
                        "a: '\$\$o.a', m: {\$map: {input: [1, 2], as: 'x', in: {\$multiply: ['\$\$x', 10]}}}, r: '\$\$rand'}}], cursor: {}, " +
                        "let: {id: 1, x: 'foo', y: {\$literal: '\$bar'}, o: {a: 5}, rand: {\$rand: {}}}}",
                ),
            ),
        ).single()
        projected.keys shouldBe setOf("x", "y", "a", "m", "r")
        projected["x"] shouldBe doc("{v: 'foo'}")["v"]
        projected["y"] shouldBe doc("{v: '\$bar'}")["v"]
        projected["a"] shouldBe doc("{v: 5}")["v"]
        projected["m"] shouldBe doc("{v: [10, 20]}")["v"]
        projected["r"]!!.isDouble shouldBe true
        counts(c.execute("d", doc("{update: 'c', updates: [{q: {\$expr: {\$eq: ['\$_id', '\$\$id']}}, u: [{\$set: {x: '\$\$x'}}]}], let: {id: 3, x: 'bar'}}"))) shouldBe
            listOf(1, 1)
        c.documents("d", "c")[2] shouldBe doc("{_id: 3, x: 'bar'}")
        c.execute("d", doc("{delete: 'c', deletes: [{q: {\$expr: {\$eq: ['\$_id', '\$\$id']}}, limit: 1}], let: {id: 3}}"))!!.getNumber("n").intValue() shouldBe 1
        // outside $expr a query takes the string literally, as mongod does
        batch(c.execute("d", doc("{find: 'c', filter: {x: '\$\$x'}, let: {x: 11}}"))) shouldBe emptyList()
    }

    test("an undefined variable is refused (17276); let is unknown before MongoDB 5.0, an aggregate's unrecognized") {
        val c = seeded()
        val undefined = c.execute("d", doc("{aggregate: 'c', pipeline: [{\$project: {x: '\$\$nope'}}], cursor: {}, let: {id: 1}}"))!!
        code(undefined) shouldBe 17276
        code(c.execute("d", doc("{find: 'c', filter: {\$expr: {\$eq: ['\$_id', '\$\$id']}}, let: {id: 2}}"), maxWireVersion = 9)) shouldBe 40415
        val aggregate = c.execute("d", doc("{aggregate: 'c', pipeline: [], cursor: {}, let: {id: 2}}"), maxWireVersion = 9)!!
        aggregate.getString("errmsg").value shouldBe "unrecognized field 'let'"
        c.execute("d", doc("{findAndModify: 'c', query: {}, update: {\$set: {a: 1}}, let: {id: 2}}"), maxWireVersion = 9)!!.getString("errmsg").value shouldBe
            "BSON field 'let' is an unknown field."
    }

    test("the sort of an update statement picks the first document in that order; without a match the statement upserts as usual") {
        val c = seeded()
        // MongoDB 7.0 (wire version 21) does not know the option
        c.execute("d", doc("{update: 'c', updates: [{q: {_id: {\$gt: 1}}, sort: {_id: -1}, u: {\$inc: {x: 1}}}]}"))!!.getString("errmsg").value shouldBe
            "BSON field 'update.updates.sort' is an unknown field."
        counts(c.execute("d", doc("{update: 'c', updates: [{q: {_id: {\$gt: 1}}, sort: {_id: -1}, u: {\$inc: {x: 1}}}]}"), maxWireVersion = 25)) shouldBe listOf(1, 1)
        c.documents("d", "c").map { it["x"]!!.asInt32().value } shouldBe listOf(11, 22, 34)
        counts(c.execute("d", doc("{update: 'c', updates: [{q: {_id: {\$gt: 1}}, sort: {x: 1}, u: {x: 0}}]}"), maxWireVersion = 25)) shouldBe listOf(1, 1)
        c.documents("d", "c")[1] shouldBe doc("{_id: 2, x: 0}")
        counts(c.execute("d", doc("{update: 'c', updates: [{q: {_id: {\$gt: 1}}, sort: {_id: -1}, u: [{\$set: {p: 1}}]}]}"), maxWireVersion = 25)) shouldBe listOf(1, 1)
        c.documents("d", "c")[2] shouldBe doc("{_id: 3, x: 34, p: 1}")
        c.execute("d", doc("{update: 'c', updates: [{q: {_id: 5}, sort: {_id: 1}, u: {\$set: {q: 1}}, upsert: true}]}"), maxWireVersion = 25)!!
            .getArray("upserted").single() shouldBe doc("{index: 0, _id: 5}")
    }

    test("an upsert whose filter or replacement gives _id the value null stores _id: null, as mongod does") {
        val c = InMemoryCollections()
        val updated = c.execute("d", doc("{update: 'c', updates: [{q: {_id: null}, u: {\$unset: {a: ''}}, upsert: true}]}"))!!
        updated.getArray("upserted").single() shouldBe doc("{index: 0, _id: null}")
        c.documents("d", "c") shouldBe listOf(doc("{_id: null}"))
        val other = InMemoryCollections()
        other.execute("d", doc("{update: 'c', updates: [{q: {}, u: {_id: null, b: 1}, upsert: true}]}"))!!.getArray("upserted").single() shouldBe
            doc("{index: 0, _id: null}")
        other.documents("d", "c") shouldBe listOf(doc("{_id: null, b: 1}"))
        val piped = InMemoryCollections()
        piped.execute("d", doc("{update: 'c', updates: [{q: {_id: null}, u: [{\$set: {p: 1}}], upsert: true}]}"))
        piped.documents("d", "c") shouldBe listOf(doc("{_id: null, p: 1}"))
    }
})
