package dev.mooring.samples

import de.bwaldvogel.mongo.MongoServer
import de.bwaldvogel.mongo.backend.memory.MemoryBackend
import dev.mooring.testkit.replset.ReplicaSetSimulator
import io.kotest.core.spec.style.FunSpec
import org.bson.BsonString
import io.kotest.matchers.ints.shouldBeGreaterThan
import io.kotest.matchers.longs.shouldBeGreaterThan
import io.kotest.matchers.shouldBe
import java.io.ByteArrayOutputStream
import java.io.PrintStream

/** Runs the Java sample against mongo-java-server: it must work end to end through the facade alone. */
class JavaSampleSpec : FunSpec({
    test("JavaSample.run against mongo-java-server: commands, listeners, publisher, idle pool") {
        val server = MongoServer(MemoryBackend())
        server.bind("127.0.0.1", 0)
        try {
            val result = JavaSample.run("mongodb://127.0.0.1:${server.localAddress.port}")
            result.pingOk shouldBe 1
            result.topologyType shouldBe "SINGLE"
            result.names shouldBe listOf("Ada", "Grace")
            result.topologyChanges shouldBeGreaterThan 0
            result.checkouts shouldBe 2
            result.publishedEvents shouldBeGreaterThan 0L
            result.finalStatistics.inUseConnections shouldBe 0
            result.finalStatistics.waitQueueSize shouldBe 0
        } finally {
            server.shutdownNow()
        }
    }

    test("JavaSample.runTransactionAndWatch on the test kit's replica set: both inserts committed and seen by the change stream") {
        ReplicaSetSimulator.start(dataMembers = 1, clusterTime = true).use { rs ->
            JavaSample.runTransactionAndWatch(rs.seedUri("serverSelectionTimeoutMS=5000")) shouldBe listOf(BsonString("alice"), BsonString("bob"))
        }
    }

    test("JavaSample.main without arguments runs against its embedded server") {
        val out = ByteArrayOutputStream()
        val previous = System.out
        System.setOut(PrintStream(out, true))
        try {
            JavaSample.main(emptyArray())
        } finally {
            System.setOut(previous)
        }
        val text = out.toString()
        text.contains("embedded mongo-java-server at mongodb://127.0.0.1:") shouldBe true
        text.contains("names=[Ada, Grace]") shouldBe true
    }
})
