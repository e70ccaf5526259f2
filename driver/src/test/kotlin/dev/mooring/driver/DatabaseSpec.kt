package dev.mooring.driver

import dev.mooring.sdam.ReadPreference
import dev.mooring.sdam.WriteAcknowledgement
import dev.mooring.sdam.WriteConcern
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.flow.toList
import org.bson.BsonDocument
import org.bson.codecs.BsonDocumentCodec

private fun doc(json: String) = BsonDocument.parse(json)

/** MongoDatabase: defaults from the cluster settings, copies, runCommand as given, drop. */
class DatabaseSpec : FunSpec({
    timeout = 120_000

    test("defaults come from the cluster settings; with… copies change only the copy") {
        WireServerFixture.withServer(uriOptions = "&w=2&timeoutMS=5000&readPreference=secondaryPreferred") { f ->
            val db = f.db
            db.name shouldBe "test"
            db.writeConcern shouldBe WriteConcern(WriteAcknowledgement.Nodes(2))
            db.readPreference shouldBe ReadPreference.SECONDARY_PREFERRED
            db.readConcern shouldBe ReadConcern.DEFAULT
            db.timeoutMS shouldBe null
            val copy = db.withReadConcern(ReadConcern.LOCAL).withTimeout(100).withReadPreference(ReadPreference.PRIMARY)
            copy.readConcern shouldBe ReadConcern.LOCAL
            copy.timeoutMS shouldBe 100
            db.readConcern shouldBe ReadConcern.DEFAULT
            val c = copy.collection("items")
            c.namespace shouldBe "test.items"
            c.readConcern shouldBe ReadConcern.LOCAL
            c.timeoutMS shouldBe 100
            c.writeConcern shouldBe WriteConcern(WriteAcknowledgement.Nodes(2))
            shouldThrow<IllegalArgumentException> { db.withTimeout(-1) }
            shouldThrow<IllegalArgumentException> { f.cluster.database("a.b") }
            shouldThrow<IllegalArgumentException> { f.cluster.database("") }
        }
    }

    test("runCommand sends the command as given (no write concern, primary); drop drops") {
        WireServerFixture.withServer(uriOptions = "&w=majority") { f ->
            val db = f.db
            db.collection("items").insertOne(doc("{_id: 1}"))
            db.runCommand(doc("{insert: 'items', documents: [{_id: 2}]}")).getInt32("n").value shouldBe 1
            f.started("insert").last().containsKey("writeConcern") shouldBe false
            db.collection("items").countDocuments() shouldBe 2
            db.collection("items").drop()
            db.collection("items").countDocuments() shouldBe 0
            db.collection("never").drop() // a missing collection is not an error
            db.collection("items").insertOne(doc("{_id: 3}"))
            db.drop()
            db.collection("items").countDocuments() shouldBe 0
            f.started("dropDatabase").single().getDocument("writeConcern") shouldBe doc("{w: 'majority'}")
        }
    }

    test("withDocumentClass and withCodec give typed views of one collection") {
        WireServerFixture.withServer { f ->
            val raw = f.db.collection("people")
            raw.insertOne(doc("{_id: 1, name: 'Ada', age: 36}"))
            val typed = raw.withDocumentClass(Person::class)
            typed.find(options = FindOptions(projection = doc("{_id: 0}"))).toList() shouldContainExactly listOf(Person("Ada", 36))
            raw.withCodec(BsonDocumentCodec()).find().toList().single().getString("name").value shouldBe "Ada"
            shouldThrow<IllegalArgumentException> { raw.withDocumentClass(NotSerializable::class) }
        }
    }
})
