package dev.mooring.testkit.server

import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import org.bson.BsonDocument

/** The test kit's `bulkWrite` admin command (crud/bulk-write.md, the server's side). */
class ClientBulkWriteCommandSpec : FunSpec({
    fun doc(json: String) = BsonDocument.parse(json)
    fun seeded() = InMemoryCollections().also {
        it.execute("db", doc("""{insert: "a", documents: [{_id: 1, x: 1}, {_id: 2, x: 2}, {_id: 3, x: 3}]}"""))
    }
    val mixed = """ops: [{insert: 0, document: {_id: 4}}, {update: 0, filter: {_id: 1}, updateMods: {${'$'}inc: {x: 1}}, multi: false},
        {update: 1, filter: {_id: 9}, updateMods: {y: 1}, upsert: true}, {delete: 0, filter: {_id: {${'$'}gte: 2}}, multi: true}],
        nsInfo: [{ns: "db.a"}, {ns: "other.b"}]"""

    test("runs each op on its namespace and reports the summary counts and every result") {
        val c = seeded()
        val reply = c.execute("admin", doc("{bulkWrite: 1, errorsOnly: false, $mixed}"))!!
        reply.getInt32("nErrors").value shouldBe 0
        listOf("nInserted", "nMatched", "nModified", "nUpserted", "nDeleted").map { reply.getInt32(it).value } shouldBe listOf(1, 1, 1, 1, 3)
        val batch = reply.getDocument("cursor").getArray("firstBatch").map { it.asDocument() }
        batch.map { it.getInt32("idx").value } shouldBe listOf(0, 1, 2, 3)
        batch[2]["upserted"] shouldBe doc("{_id: 9}")
        reply.getDocument("cursor").getInt64("id").value shouldBe 0L
        c.documents("db", "a") shouldBe listOf(doc("{_id: 1, x: 2}"))
        c.documents("other", "b").single()["y"]!!.asInt32().value shouldBe 1
    }

    test("errorsOnly returns only the errors; ordered stops at the first one, unordered goes on") {
        val ordered = seeded()
        val dup = """ops: [{insert: 0, document: {_id: 1}}, {insert: 0, document: {_id: 5}}], nsInfo: [{ns: "db.a"}]"""
        val r1 = ordered.execute("admin", doc("{bulkWrite: 1, errorsOnly: true, $dup}"))!!
        r1.getInt32("nErrors").value shouldBe 1
        r1.getDocument("cursor").getArray("firstBatch").map { it.asDocument().getInt32("code").value } shouldBe listOf(11000)
        ordered.documents("db", "a").size shouldBe 3
        val unordered = seeded()
        val r2 = unordered.execute("admin", doc("{bulkWrite: 1, errorsOnly: true, ordered: false, $dup}"))!!
        r2.getInt32("nInserted").value shouldBe 1
        unordered.documents("db", "a").size shouldBe 4
    }

    test("a retry of the same lsid and txnNumber does not apply the ops again") {
        val c = seeded()
        val retryable = """{bulkWrite: 1, ops: [{update: 0, filter: {_id: 1}, updateMods: {${'$'}inc: {x: 1}}}], nsInfo: [{ns: "db.a"}],
            lsid: {id: 1}, txnNumber: {${'$'}numberLong: "1"}}"""
        c.execute("admin", doc(retryable))
        c.execute("admin", doc(retryable))!!.getInt32("nModified").value shouldBe 1
        c.documents("db", "a").first()["x"]!!.asInt32().value shouldBe 2
    }

    test("only on admin, with ops and nsInfo") {
        val c = seeded()
        c.execute("db", doc("{bulkWrite: 1, $mixed}"))!!.getInt32("code").value shouldBe 13
        c.execute("admin", doc("""{bulkWrite: 1, nsInfo: [{ns: "db.a"}]}"""))!!.getInt32("ok").value shouldBe 0
        c.execute("admin", doc("""{bulkWrite: 1, ops: [{insert: 3, document: {}}], nsInfo: [{ns: "db.a"}]}"""))!!.getInt32("code").value shouldBe 14
    }
})
