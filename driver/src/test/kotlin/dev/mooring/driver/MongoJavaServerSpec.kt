package dev.mooring.driver

import de.bwaldvogel.mongo.MongoServer
import de.bwaldvogel.mongo.backend.memory.MemoryBackend
import dev.mooring.cmap.CommandStartedEvent
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.sdam.WriteAcknowledgement
import dev.mooring.sdam.WriteConcern
import dev.mooring.testkit.EventRecorder
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.flow.toList
import kotlinx.serialization.Serializable
import org.bson.BsonDocument

@Serializable
data class City(val name: String, val population: Long)

/** The collection API against mongo-java-server (a legacy-hello server with its own query engine). */
class MongoJavaServerSpec : FunSpec({
    timeout = 120_000

    suspend fun withMongoJavaServer(block: suspend (MongoCluster, EventRecorder) -> Unit) {
        val server = MongoServer(MemoryBackend())
        server.bind("127.0.0.1", 0)
        val recorder = EventRecorder()
        val cluster = MongoCluster(MongoClusterSettings.fromUri("mongodb://127.0.0.1:${server.localAddress.port}/?serverSelectionTimeoutMS=5000"), listOf(recorder))
        try {
            block(cluster, recorder)
        } finally {
            cluster.closeSuspending()
            server.shutdownNow()
        }
    }

    test("typed CRUD round trip, sorted find, countDocuments, duplicate key") {
        withMongoJavaServer { cluster, _ ->
            val cities = cluster.database("geo").collection<City>("cities")
            cities.insertMany(listOf(City("Oslo", 700_000), City("Bergen", 285_000), City("Tromsø", 77_000)))
            cities.find(BsonDocument.parse("{population: {\$gt: 100000}}"), FindOptions(sort = BsonDocument.parse("{population: 1}"))).toList() shouldContainExactly
                listOf(City("Bergen", 285_000), City("Oslo", 700_000))
            cities.countDocuments(BsonDocument.parse("{population: {\$lt: 300000}}")) shouldBe 2
            cities.replaceOne(BsonDocument.parse("{name: 'Tromsø'}"), City("Tromsø", 78_000)) shouldBe UpdateResult.Acknowledged(1, 1, null)
            cities.findOneAndDelete(BsonDocument.parse("{name: 'Bergen'}")) shouldBe City("Bergen", 285_000)
            val raw = cluster.database("geo").collection("cities")
            val id = raw.find().toList().first()["_id"]!!
            shouldThrow<MongoWriteException> { raw.insertOne(BsonDocument("_id", id)) }.code shouldBe 11000
        }
    }

    test("aggregate with \$out: sent with the write concern, run on the primary, no getMore; the output collection is written") {
        withMongoJavaServer { cluster, recorder ->
            val db = cluster.database("geo")
            val cities = db.collection<City>("cities")
            cities.insertMany(listOf(City("Oslo", 700_000), City("Bergen", 285_000)))
            cities.withWriteConcern(WriteConcern(WriteAcknowledgement.Nodes(1)))
                .aggregate(listOf(BsonDocument.parse("{\$match: {population: {\$gt: 300000}}}"), BsonDocument.parse("{\$out: 'big'}")), AggregateOptions(batchSize = 0))
                .toList() shouldBe emptyList()
            val sent = recorder.ofType<CommandStartedEvent>().single { it.commandName == "aggregate" }.command
            sent.getDocument("writeConcern") shouldBe BsonDocument.parse("{w: 1}")
            sent.getDocument("cursor") shouldBe BsonDocument() // no batchSize 0 with $out
            recorder.ofType<CommandStartedEvent>().none { it.commandName == "getMore" } shouldBe true
            db.collection<City>("big").find().toList() shouldContainExactly listOf(City("Oslo", 700_000))
        }
    }
})
