package dev.mooring.samples

import de.bwaldvogel.mongo.MongoServer
import de.bwaldvogel.mongo.backend.memory.MemoryBackend
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.testkit.replset.ReplicaSetSimulator
import io.kotest.core.spec.style.FunSpec
import org.bson.BsonString
import io.kotest.matchers.collections.shouldContain
import io.kotest.matchers.ints.shouldBeGreaterThan
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import java.io.ByteArrayOutputStream
import java.io.PrintStream

class KotlinSampleSpec : FunSpec({
    test("the Kotlin sample runs against mongo-java-server: reads back what it wrote and collects events as a Flow") {
        val server = MongoServer(MemoryBackend()).also { it.bind("127.0.0.1", 0) }
        try {
            val bytes = ByteArrayOutputStream()
            val result = kotlinSample("127.0.0.1", server.localAddress.port, PrintStream(bytes, true, Charsets.UTF_8))
            result.names shouldBe listOf("ada", "grace", "barbara")
            result.checkedOutEvents shouldBeGreaterThan 0
            result.serverTypes shouldContain "Standalone"
            val text = bytes.toString(Charsets.UTF_8)
            text shouldContain "topology Single"
            text shouldContain "found ada, grace, barbara"
        } finally {
            server.shutdownNow()
        }
    }

    test("the Kotlin sample's transaction and change stream on the test kit's replica set: both inserts committed and seen") {
        ReplicaSetSimulator.start(dataMembers = 1, clusterTime = true).use { rs ->
            val cluster = MongoCluster(MongoClusterSettings.fromUri(rs.seedUri("serverSelectionTimeoutMS=5000")))
            try {
                val bytes = ByteArrayOutputStream()
                kotlinTransactionSample(cluster, PrintStream(bytes, true, Charsets.UTF_8)) shouldBe listOf(BsonString("alice"), BsonString("bob"))
                bytes.toString(Charsets.UTF_8) shouldContain "change: insert ChangeStreamNamespace(db=bank, coll=accounts)"
            } finally {
                cluster.closeSuspending()
            }
        }
    }
})
