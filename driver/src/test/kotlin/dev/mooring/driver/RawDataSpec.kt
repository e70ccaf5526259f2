package dev.mooring.driver

import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldBeEmpty
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.flow.toList
import org.bson.BsonBoolean
import org.bson.BsonDocument
import java.lang.reflect.Modifier

/**
 * crud.md, bulk-write.md, index-management.md `rawData`: behind the [MooringRawDataOption] opt-in;
 * sent as set to MongoDB 8.2+ (wire version 27), never to an older server (wire version 26 here,
 * whose test kit server would refuse the field as unknown).
 */
@OptIn(MooringRawDataOption::class)
class RawDataSpec : FunSpec({
    fun doc(json: String) = BsonDocument.parse(json)
    val raw = RawData.of(true)

    /** Every helper that takes rawData, with the option set, against [f]'s server. */
    suspend fun everyHelper(f: WireServerFixture) {
        val c = f.db.collection("items")
        c.insertOne(doc("{_id: 1, a: 1}"), InsertOneOptions(rawData = raw))
        c.insertMany(listOf(doc("{_id: 2}"), doc("{_id: 3}")), InsertManyOptions(rawData = raw))
        c.find(doc("{}"), FindOptions(rawData = raw)).toList()
        c.aggregate(listOf(doc("{\$match: {}}")), AggregateOptions(rawData = raw)).toList()
        c.countDocuments(doc("{}"), CountOptions(rawData = raw))
        c.estimatedDocumentCount(EstimatedDocumentCountOptions(rawData = raw))
        c.distinct("a", doc("{}"), DistinctOptions(rawData = raw))
        c.updateOne(doc("{_id: 1}"), Update.Operators(doc("{\$set: {b: 1}}")), UpdateOptions(rawData = raw))
        c.replaceOne(doc("{_id: 1}"), doc("{_id: 1, a: 2}"), ReplaceOptions(rawData = raw))
        c.deleteOne(doc("{_id: 3}"), DeleteOptions(rawData = raw))
        c.findOneAndUpdate(doc("{_id: 1}"), Update.Operators(doc("{\$set: {c: 1}}")), FindOneAndUpdateOptions(rawData = raw))
        c.findOneAndReplace(doc("{_id: 1}"), doc("{_id: 1}"), FindOneAndReplaceOptions(rawData = raw))
        c.findOneAndDelete(doc("{_id: 2}"), FindOneAndDeleteOptions(rawData = raw))
        c.bulkWrite(listOf(WriteModel.InsertOne(doc("{_id: 4}"))), BulkWriteOptions(rawData = raw))
        f.cluster.bulkWrite(listOf(ClientNamespacedWriteModel.of("test.items", WriteModel.InsertOne(doc("{_id: 5}")))), ClientBulkWriteOptions(rawData = raw))
        c.createIndex(doc("{a: 1}"), options = CreateIndexOptions(rawData = raw))
        c.listIndexes(ListIndexesOptions(rawData = raw)).toList()
        c.dropIndex("a_1", DropIndexOptions(rawData = raw))
        f.db.listCollections(options = ListCollectionsOptions(rawData = raw)).toList()
    }

    val commands = listOf(
        "insert", "find", "aggregate", "count", "distinct", "update", "delete", "findAndModify", "bulkWrite",
        "createIndexes", "listIndexes", "dropIndexes", "listCollections",
    )

    test("rawData is sent by every helper that takes it to a MongoDB 8.2 server (wire version 27)") {
        WireServerFixture.withServer(configure = { it.maxWireVersion = 27 }) { f ->
            everyHelper(f)
            for (name in commands) {
                val sent = f.started(name)
                (name to sent.isNotEmpty()) shouldBe (name to true)
                sent.forEach { (name to it["rawData"]) shouldBe (name to BsonBoolean.TRUE) }
            }
        }
    }

    test("rawData is never sent to a server older than MongoDB 8.2 (wire version 26), and the helpers succeed there") {
        WireServerFixture.withServer(configure = { it.maxWireVersion = 26 }) { f ->
            everyHelper(f)
            for (name in commands) {
                val sent = f.started(name)
                (name to sent.isNotEmpty()) shouldBe (name to true)
                sent.filter { it.containsKey("rawData") }.shouldBeEmpty()
            }
        }
    }

    test("the generic runCommand sends its command as given, rawData included, whatever the server") {
        WireServerFixture.withServer(configure = { it.maxWireVersion = 26 }) { f ->
            val reply = runCatching { f.db.runCommand(doc("{ping: 1, rawData: true}")) }
            f.started("ping").single()["rawData"] shouldBe BsonBoolean.TRUE
            reply.exceptionOrNull()?.message.orEmpty() shouldContain "rawData"
        }
    }

    test("a RawData only comes from the factory behind the MooringRawDataOption opt-in") {
        RawData::class.java.declaredConstructors.none { Modifier.isPublic(it.modifiers) } shouldBe true
        // the opt-in marker has BINARY retention: it is in the factory's class file, not visible to reflection
        val bytes = RawData.Companion::class.java.getResourceAsStream("RawData\$Companion.class")!!.use { it.readBytes() }
        String(bytes, Charsets.ISO_8859_1) shouldContain "Ldev/mooring/driver/MooringRawDataOption;"
        RawData.of(true).value shouldBe true
        RawData.of(false) shouldBe RawData.of(false)
    }
})
