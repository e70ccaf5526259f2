package dev.mooring.driver

import de.bwaldvogel.mongo.MongoServer
import de.bwaldvogel.mongo.backend.memory.MemoryBackend
import dev.mooring.cmap.MongoCommandException
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContain
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.collections.shouldNotContain
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.flow.toList
import org.bson.BsonDocument

/** Index and collection management against mongo-java-server (its own index and catalog semantics). */
class ManagementOnMongoJavaServerSpec : FunSpec({
    timeout = 120_000

    suspend fun withMongoJavaServer(block: suspend (MongoCluster) -> Unit) {
        val server = MongoServer(MemoryBackend())
        server.bind("127.0.0.1", 0)
        val cluster = MongoCluster(MongoClusterSettings.fromUri("mongodb://127.0.0.1:${server.localAddress.port}/?serverSelectionTimeoutMS=5000"))
        try {
            block(cluster)
        } finally {
            cluster.closeSuspending()
            server.shutdownNow()
        }
    }

    test("a unique index created by the driver is enforced, listed and dropped") {
        withMongoJavaServer { cluster ->
            val people = cluster.database("app").collection("people")
            people.createIndex(BsonDocument.parse("{email: 1}"), IndexOptions(unique = true)) shouldBe "email_1"
            people.listIndexNames() shouldContainExactly listOf("_id_", "email_1")
            people.listIndexes().toList().single { it.getString("name").value == "email_1" }.getBoolean("unique").value shouldBe true
            people.insertOne(BsonDocument.parse("{email: 'a@x'}"))
            shouldThrow<MongoWriteException> { people.insertOne(BsonDocument.parse("{email: 'a@x'}")) }.code shouldBe 11000
            people.dropIndex("email_1")
            people.insertOne(BsonDocument.parse("{email: 'a@x'}"))
            people.listIndexNames() shouldContainExactly listOf("_id_")
        }
    }

    test("createCollection, listCollectionNames, renameCollection and drop on one database; listDatabaseNames") {
        withMongoJavaServer { cluster ->
            val db = cluster.database("app")
            db.createCollection("orders")
            shouldThrow<MongoCommandException> { db.createCollection("orders") }.code shouldBe 48
            db.collection("orders").insertOne(BsonDocument.parse("{_id: 1}"))
            db.listCollectionNames() shouldContain "orders"
            val renamed = db.collection("orders").renameCollection("archive")
            renamed.countDocuments() shouldBe 1
            db.listCollectionNames() shouldNotContain "orders"
            db.listCollections(BsonDocument.parse("{name: 'archive'}")).toList().single().getString("name").value shouldBe "archive"
            cluster.listDatabaseNames() shouldContain "app"
            renamed.drop()
            db.listCollectionNames() shouldNotContain "archive"
        }
    }

    test("a drop of a missing collection is not an error when the server answers only 'ns not found' (no code)") {
        withMongoJavaServer { cluster ->
            // mongo-java-server answers {ok: 0, errmsg: "ns not found"} without a code, as older servers did
            val missing = cluster.database("app").collection("never-created")
            missing.drop()
            missing.dropIndexes()
        }
    }
})
