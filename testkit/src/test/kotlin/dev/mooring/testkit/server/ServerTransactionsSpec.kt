package dev.mooring.testkit.server

import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import org.bson.BsonArray
import org.bson.BsonBoolean
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonInt64
import org.bson.BsonString

/** The test kit's multi-document transactions ([ServerTransactions] through [InMemoryCollections]). */
class ServerTransactionsSpec : FunSpec({
    fun lsid(n: Int) = BsonDocument("id", BsonInt32(n))
    fun inTxn(cmd: BsonDocument, session: Int, txn: Long = 1, start: Boolean = false) = cmd.clone().apply {
        put("lsid", lsid(session))
        put("txnNumber", BsonInt64(txn))
        if (start) put("startTransaction", BsonBoolean.TRUE)
        put("autocommit", BsonBoolean.FALSE)
    }
    fun insert(id: Int) = BsonDocument("insert", BsonString("c")).append("documents", BsonArray(listOf(BsonDocument("_id", BsonInt32(id)))))
    fun find() = BsonDocument("find", BsonString("c"))
    fun commit() = BsonDocument("commitTransaction", BsonInt32(1))
    fun abort() = BsonDocument("abortTransaction", BsonInt32(1))
    fun ids(reply: BsonDocument) = reply.getDocument("cursor").getArray("firstBatch").map { it.asDocument().getInt32("_id").value }
    fun code(reply: BsonDocument) = reply.getNumber("code", BsonInt32(0)).intValue()
    fun labels(reply: BsonDocument) = (reply["errorLabels"] as? BsonArray)?.map { it.asString().value } ?: emptyList()

    test("a transaction's writes are visible inside it and invisible outside until commit; a repeated commit is ok") {
        val c = InMemoryCollections()
        c.execute("db", insert(1))
        c.execute("db", inTxn(insert(2), 1, start = true))!!.getInt32("n").value shouldBe 1
        ids(c.execute("db", inTxn(find(), 1))!!) shouldBe listOf(1, 2)
        ids(c.execute("db", find())!!) shouldBe listOf(1)
        c.execute("admin", inTxn(commit(), 1))!!.getInt32("ok").value shouldBe 1
        ids(c.execute("db", find())!!) shouldBe listOf(1, 2)
        c.execute("admin", inTxn(commit(), 1))!!.getInt32("ok").value shouldBe 1
        c.documents("db", "c").size shouldBe 2
    }

    test("an aborted transaction leaves nothing; its next command is NoSuchTransaction (TransientTransactionError)") {
        val c = InMemoryCollections()
        c.execute("db", inTxn(insert(1), 1, start = true))
        c.execute("admin", inTxn(abort(), 1))!!.getInt32("ok").value shouldBe 1
        c.documents("db", "c") shouldBe emptyList()
        val r = c.execute("admin", inTxn(commit(), 1))!!
        code(r) shouldBe 251
        labels(r) shouldBe listOf("TransientTransactionError")
        code(c.execute("db", inTxn(insert(3), 1, txn = 7))!!) shouldBe 251 // never started
    }

    test("a write that conflicts with another open transaction is WriteConflict and aborts its transaction") {
        val c = InMemoryCollections()
        c.execute("db", inTxn(insert(1), 1, start = true))
        val conflict = c.execute("db", inTxn(insert(1), 2, start = true))!!
        code(conflict) shouldBe 112
        labels(conflict) shouldBe listOf("TransientTransactionError")
        c.execute("admin", inTxn(commit(), 1))!!.getInt32("ok").value shouldBe 1
        code(c.execute("admin", inTxn(commit(), 2))!!) shouldBe 251
        c.documents("db", "c").size shouldBe 1
    }

    test("a commit whose collection changed outside it since its first touch is WriteConflict; a step-down aborts open transactions") {
        val c = InMemoryCollections()
        c.execute("db", inTxn(insert(1), 1, start = true))
        c.execute("db", insert(2))
        code(c.execute("admin", inTxn(commit(), 1))!!) shouldBe 112
        c.documents("db", "c").map { it.getInt32("_id").value } shouldBe listOf(2)
        c.execute("db", inTxn(insert(3), 1, txn = 2, start = true))
        c.abortOpenTransactions()
        code(c.execute("admin", inTxn(commit(), 1, txn = 2))!!) shouldBe 251
    }

    test("a unique index of the shared data applies inside a transaction") {
        val c = InMemoryCollections()
        c.execute("db", BsonDocument.parse("{createIndexes: 'c', indexes: [{key: {x: 1}, name: 'x_1', unique: true}]}"))
        c.execute("db", BsonDocument.parse("{insert: 'c', documents: [{_id: 1, x: 1}]}"))
        val r = c.execute("db", inTxn(BsonDocument.parse("{insert: 'c', documents: [{_id: 2, x: 1}]}"), 1, start = true))!!
        (r["writeErrors"] as BsonArray).single().asDocument().getInt32("code").value shouldBe 11000
    }
})
