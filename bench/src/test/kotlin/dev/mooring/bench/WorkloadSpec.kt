package dev.mooring.bench

import com.mongodb.client.MongoClients
import com.mongodb.client.model.Filters
import dev.mooring.bench.report.BenchRow
import dev.mooring.bench.report.Library
import dev.mooring.bench.report.RatioTable
import dev.mooring.bench.report.Scenario
import dev.mooring.bench.server.CannedServer
import dev.mooring.bench.workload.TaskIterations
import dev.mooring.bench.workload.WorkloadTask
import dev.mooring.driver.database
import dev.mooring.sdam.MongoCluster
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.doubles.plusOrMinus
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.flow.count
import kotlinx.coroutines.flow.toList
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.jsonObject
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString

/** The workload tasks' measurement, the canned server's answers, and their report rows. */
class WorkloadSpec : FunSpec({
    timeout = 120_000

    test("the score's median is benchmarking.md's nearest rank: sorted, index int(N * p / 100) - 1") {
        TaskIterations.percentile(longArrayOf(50, 10, 40, 20, 30), 50) shouldBe 20 // int(2.5) - 1 = 1
        TaskIterations.percentile(longArrayOf(5, 1, 4, 2, 3, 9, 8, 7, 6, 10), 50) shouldBe 5 // index 4 of 10
        TaskIterations.percentile(longArrayOf(5, 1, 4), 10) shouldBe 1 // int(0.3) - 1 < 0: the first
        TaskIterations.percentile(LongArray(100) { 100L - it }, 99) shouldBe 99
    }

    test("MB/s is the task's size over the median iteration; CPU per MB and allocation per document over all iterations") {
        // find-many: 16.22 MB, 10,000 documents; three iterations, median (nearest rank of 3: the first) 0.5 s
        val m = TaskIterations.summarize(WorkloadTask.FIND_MANY, longArrayOf(2_000_000_000, 500_000_000, 1_000_000_000), 4_866_000_000, 1_000_000_000, 3_000_000)
        m.getValue("medianMs") shouldBe 500.0
        m.getValue("mbPerSec") shouldBe (32.44 plusOrMinus 1e-9)
        m.getValue("cpuUsPerMb") shouldBe (4_866_000.0 / (16.22 * 3) plusOrMinus 1e-6)
        m.getValue("serverCpuUsPerMb") shouldBe (1_000_000.0 / (16.22 * 3) plusOrMinus 1e-6)
        m.getValue("allocBytesPerDoc") shouldBe 100.0
        m.getValue("iterations") shouldBe 3.0
    }

    test("the canned server serves the find-many cursor through getMores, a find by _id, and acknowledges inserts, with and without zstd") {
        val tweet = BsonDocument("text", BsonString("x".repeat(1_500))).append("n", BsonInt32(1))
        val server = CannedServer.bind(tweet, corpusSize = 10_000)
        val thread = Thread(server::run, "canned-test").apply { isDaemon = true; start() }
        try {
            for (options in listOf("", "compressors=zstd")) {
                val uri = "mongodb://127.0.0.1:${server.port}/?$options"
                MongoClients.create(uri).use { client ->
                    val c = client.getDatabase("perftest").getCollection("corpus", BsonDocument::class.java)
                    c.find().toList().size shouldBe 10_000
                    c.find().batchSize(1_000).toList().size shouldBe 10_000
                    c.find(Filters.eq("_id", 7)).first()!!.getString("text").value.length shouldBe 1_500
                    c.insertMany(List(10_000) { BsonDocument("a", BsonInt32(it)) }).insertedIds.size shouldBe 10_000
                    c.insertOne(BsonDocument("a", BsonInt32(1))).wasAcknowledged() shouldBe true
                    c.drop()
                }
                val cluster = MongoCluster(uri)
                try {
                    val c = cluster.database("perftest").collection("corpus")
                    c.find().count() shouldBe 10_000
                    c.find(BsonDocument("_id", BsonInt32(3))).toList().size shouldBe 1
                    c.insertMany(List(1_000) { BsonDocument("a", BsonInt32(it)) }).insertedIds.size shouldBe 1_000
                } finally {
                    cluster.closeSuspending()
                }
            }
        } finally {
            server.close()
            thread.join(5_000)
        }
    }

    test("a workload row keeps its server and compressor in JSON and in the cell key; the table compares Mooring with the coroutine driver and the floor") {
        fun row(lib: Library, mbPerSec: Double) = BenchRow(lib, Scenario.FIND_MANY, null, null, mapOf("mbPerSec" to mbPerSec, "cpuUsPerMb" to 6_000.0 / mbPerSec), server = "canned", compressor = "zstd")
        val rows = listOf(row(Library.MOORING, 60.0), row(Library.JAVA_SYNC, 50.0), row(Library.KOTLIN_COROUTINE, 30.0), row(Library.FLOOR, 75.0))
        val back = BenchRow.fromJson(Json.parseToJsonElement(rows[0].toJson().toString()).jsonObject)
        back shouldBe rows[0]
        back.cellKey shouldBe "find-many|-|-|canned|zstd"
        RatioTable.ratiosTo(rows, Library.KOTLIN_COROUTINE).getValue("mbPerSec") shouldBe 2.0
        RatioTable.ratiosTo(rows, Library.FLOOR).getValue("mbPerSec") shouldBe 0.8
        RatioTable.ratios(rows).getValue("mbPerSec") shouldBe 1.2
        val table = RatioTable.render(rows)
        table shouldContain "### find-many"
        table shouldContain "| canned | zstd | **mooring ÷ kotlin-coroutine** | **2.00×**"
        Library.KOTLIN_COROUTINE.measures(Scenario.PING_RESPONDER) shouldBe false
        Library.FLOOR.measures(Scenario.FIND_ONE_BY_ID) shouldBe true
        Library.FLOOR.measures(Scenario.SMALL_DOC_BULK_INSERT) shouldBe false
        Library.MOORING_DEFAULT.measures(Scenario.FIND_MANY) shouldBe false
    }
})
