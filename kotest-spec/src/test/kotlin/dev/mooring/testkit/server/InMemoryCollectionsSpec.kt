package dev.mooring.testkit.server

import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import org.bson.BsonArray
import org.bson.BsonBoolean
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString
import org.bson.BsonValue

/** The `{_id: value}` lookups answer from the index exactly what a scan would, through inserts, updates and deletes. */
class InMemoryCollectionsSpec : FunSpec({
    fun doc(id: BsonValue, n: Int) = BsonDocument("_id", id).append("n", BsonInt32(n))
    fun InMemoryCollections.insert(vararg docs: BsonDocument) =
        insert("db", BsonDocument("insert", BsonString("c")).append("documents", BsonArray(docs.toList())))
    fun InMemoryCollections.findNs(filter: BsonDocument, limit: Int = 0): List<Int> =
        find("db", BsonDocument("find", BsonString("c")).append("filter", filter).append("limit", BsonInt32(limit)))
            .getDocument("cursor").getArray("firstBatch").map { it.asDocument().getInt32("n").value }
    fun byId(id: BsonValue) = BsonDocument("_id", id)

    test("find by _id: one document among many, none for an unknown id, duplicates in insertion order") {
        val c = InMemoryCollections()
        for (i in 0 until 1000) c.insert(doc(BsonString("d$i"), i))
        c.findNs(byId(BsonString("d999"))) shouldBe listOf(999)
        c.findNs(byId(BsonString("nope"))) shouldBe emptyList()
        c.findNs(byId(BsonInt32(5))) shouldBe emptyList() // no type coercion, as with the scan
        c.insert(doc(BsonString("d3"), 1003))
        c.findNs(byId(BsonString("d3"))) shouldBe listOf(3, 1003)
        c.findNs(byId(BsonString("d3")), limit = 1) shouldBe listOf(3)
        c.findNs(BsonDocument("n", BsonInt32(1003))) shouldBe listOf(1003)
    }

    test("the index follows updates (\$set of _id, replacement, \$inc, upsert) and deletes") {
        val c = InMemoryCollections()
        c.insert(doc(BsonString("a"), 1), doc(BsonString("b"), 2))
        fun update(q: BsonDocument, u: BsonDocument, upsert: Boolean = false) = c.update("db", BsonDocument("update", BsonString("c"))
            .append("updates", BsonArray(listOf(BsonDocument("q", q).append("u", u).append("upsert", BsonBoolean.valueOf(upsert))))))
        update(byId(BsonString("a")), BsonDocument("\$set", BsonDocument("_id", BsonString("z"))))
        c.findNs(byId(BsonString("a"))) shouldBe emptyList()
        c.findNs(byId(BsonString("z"))) shouldBe listOf(1)
        update(byId(BsonString("b")), BsonDocument("n", BsonInt32(20)))
        c.findNs(byId(BsonString("b"))) shouldBe listOf(20)
        update(byId(BsonString("b")), BsonDocument("\$inc", BsonDocument("n", BsonInt32(5))))
        c.findNs(byId(BsonString("b"))) shouldBe listOf(25)
        update(byId(BsonString("u")), BsonDocument("\$set", BsonDocument("n", BsonInt32(30))), upsert = true)
        c.findNs(byId(BsonString("u"))) shouldBe listOf(30)
        c.delete("db", BsonDocument("delete", BsonString("c")).append("deletes", BsonArray(listOf(BsonDocument("q", byId(BsonString("z"))).append("limit", BsonInt32(1))))))
        c.findNs(byId(BsonString("z"))) shouldBe emptyList()
        c.findNs(BsonDocument()) shouldBe listOf(25, 30)
        c.drop("db", BsonDocument("drop", BsonString("c")))
        c.findNs(byId(BsonString("b"))) shouldBe emptyList()
    }
})
