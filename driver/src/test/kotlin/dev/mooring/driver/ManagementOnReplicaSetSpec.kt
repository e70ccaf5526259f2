package dev.mooring.driver

import dev.mooring.cmap.CommandStartedEvent
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.sdam.ReadPreference
import dev.mooring.testkit.EventRecorder
import dev.mooring.testkit.replset.ReplicaSetSimulator
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.flow.toList
import org.bson.BsonDocument

/**
 * server-selection.md "should-use-primary" helpers (listCollections, listIndexes, listDatabases)
 * and the writing helpers go to the primary whatever the read preference; the database
 * aggregate follows it, as a may-use-secondary read.
 */
class ManagementOnReplicaSetSpec : FunSpec({
    timeout = 120_000

    test("with a secondary read preference, listing and index commands go to the primary, a database aggregate to a secondary") {
        ReplicaSetSimulator.start(dataMembers = 2).use { rs ->
            val recorder = EventRecorder()
            val cluster = MongoCluster(MongoClusterSettings.fromUri(rs.seedUri("serverSelectionTimeoutMS=5000&readPreference=secondary")), listOf(recorder))
            try {
                val db = cluster.database("test")
                db.readPreference shouldBe ReadPreference.SECONDARY
                db.createCollection("items")
                val items = db.collection("items")
                items.createIndex(BsonDocument.parse("{a: 1}")) shouldBe "a_1"
                db.listCollectionNames() shouldContainExactly listOf("items")
                items.listIndexNames() shouldContainExactly listOf("_id_", "a_1")
                cluster.listDatabaseNames() shouldContainExactly listOf("test")
                items.dropIndexes()
                // the test kit knows no collection-less stage (BadValue): only where the command went matters here
                runCatching { db.aggregate(listOf(BsonDocument.parse("{\$documents: [{x: 1}]}"))).toList() }
                val primary = rs.primary!!.address
                val sent = recorder.ofType<CommandStartedEvent>()
                for (name in listOf("create", "createIndexes", "listCollections", "listIndexes", "listDatabases", "dropIndexes")) {
                    sent.filter { it.commandName == name }.map { it.address }.toSet() shouldBe setOf(primary)
                }
                sent.single { it.commandName == "aggregate" }.address shouldBe rs.secondaries.single().address
            } finally {
                cluster.closeSuspending()
            }
        }
    }
})
