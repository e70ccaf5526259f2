package dev.mooring.bench

import com.mongodb.MongoNamespace
import com.mongodb.client.MongoClients
import com.mongodb.client.model.DeleteOneModel
import com.mongodb.client.model.Filters
import com.mongodb.client.model.InsertOneModel
import com.mongodb.client.model.ReplaceOneModel
import com.mongodb.client.model.bulk.ClientNamespacedWriteModel as OfficialClientModel
import de.bwaldvogel.mongo.MongoServer
import de.bwaldvogel.mongo.backend.memory.MemoryBackend
import dev.mooring.bench.harness.BenchMain
import dev.mooring.bench.harness.BenchPlan
import dev.mooring.bench.mooring.MooringGridFs
import dev.mooring.bench.mooring.MooringJavaParallel
import dev.mooring.bench.mooring.MooringParallel
import dev.mooring.bench.official.CoroutineParallel
import dev.mooring.bench.official.ReactiveParallel
import dev.mooring.bench.official.SyncParallel
import dev.mooring.bench.workload.ParallelTaskOps
import dev.mooring.bench.mooring.MooringJavaGridFs
import dev.mooring.bench.mooring.MooringJavaWorkload
import dev.mooring.bench.floor.FloorFind
import dev.mooring.bench.mooring.MooringWorkload
import dev.mooring.bench.mooring.MooringOdm
import dev.mooring.bench.official.CoroutineOdm
import dev.mooring.bench.official.ReactiveGridFs
import dev.mooring.bench.official.ReactiveWorkload
import dev.mooring.bench.official.SyncGridFs
import dev.mooring.bench.official.SyncWorkload
import dev.mooring.bench.worker.CellCommand
import dev.mooring.bench.workload.BulkOp
import dev.mooring.bench.workload.ForeignKeyModel
import dev.mooring.bench.workload.LargeNestedModel
import dev.mooring.bench.workload.OdmTaskOps
import dev.mooring.bench.workload.SmallModel
import dev.mooring.bench.workload.DocumentTaskOps
import dev.mooring.bench.workload.PreparedBulkWrite
import dev.mooring.bench.report.BenchRow
import dev.mooring.bench.report.Library
import dev.mooring.bench.report.RatioTable
import dev.mooring.bench.report.Scenario
import dev.mooring.bench.server.CannedServer
import dev.mooring.bench.workload.TaskIterations
import dev.mooring.bench.workload.WorkloadTask
import dev.mooring.driver.BulkWriteResult
import dev.mooring.driver.ClientBulkWriteResult
import dev.mooring.driver.ClientNamespacedWriteModel
import dev.mooring.driver.WriteModel
import dev.mooring.driver.bulkWrite
import dev.mooring.driver.database
import dev.mooring.sdam.MongoCluster
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.assertions.withClue
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
import org.bson.types.ObjectId
import java.nio.file.Files

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

    test("a cell scaled down to fewer operations is scored on the same share of the task's size and says how many it ran") {
        val task = WorkloadTask.ODM_FLAT_SMALL_MODEL_CREATION // 2.5 MB for 10,000 models
        val m = TaskIterations.summarize(task, longArrayOf(250_000_000, 500_000_000), 1_000_000_000, null, 8_000_000, operations = 2_000)
        m.getValue("mbPerSec") shouldBe (0.5 / 0.25 plusOrMinus 1e-9) // nearest rank of 2: the first
        m.getValue("cpuUsPerMb") shouldBe (1_000_000.0 / (0.5 * 2) plusOrMinus 1e-6)
        m.getValue("allocBytesPerDoc") shouldBe 2_000.0
        m.getValue("operations") shouldBe 2_000.0
        TaskIterations.summarize(task, longArrayOf(1), 1, null, 1).containsKey("operations") shouldBe false
        shouldThrow<IllegalArgumentException> { TaskIterations.summarize(task, longArrayOf(1), 1, null, 1, operations = 20_000) }
        val cmd = CellCommand(task.scenario, count = 2, warmupIterations = 1, operations = 2_000)
        CellCommand.fromJson(cmd.toJson()) shouldBe cmd
        TaskIterations.operationsOf(cmd, task) shouldBe 2_000
        TaskIterations.operationsOf(cmd.copy(operations = 0), task) shouldBe 10_000
        // the cell's size is reported, never compared
        fun row(lib: Library) = BenchRow(lib, task.scenario, null, null, mapOf("mbPerSec" to 2.0, "operations" to 2_000.0, "iterations" to 2.0), server = "canned", compressor = "none")
        RatioTable.ratiosTo(listOf(row(Library.MOORING), row(Library.KOTLIN_COROUTINE)), Library.KOTLIN_COROUTINE) shouldBe mapOf("mbPerSec" to 1.0)
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

    test("the canned server acknowledges update, delete and the admin bulkWrite command as a server would, with and without zstd") {
        val server = CannedServer.bind(BsonDocument("a", BsonInt32(1)), corpusSize = 10)
        val thread = Thread(server::run, "canned-test").apply { isDaemon = true; start() }
        val empty = BsonDocument()
        fun doc(i: Int) = BsonDocument("a", BsonInt32(i))
        try {
            for (options in listOf("", "compressors=zstd")) {
                val uri = "mongodb://127.0.0.1:${server.port}/?$options"
                MongoClients.create(uri).use { client ->
                    val c = client.getDatabase("perftest").getCollection("corpus", BsonDocument::class.java)
                    val r = c.bulkWrite(List(300) { i -> listOf(InsertOneModel(doc(i)), ReplaceOneModel(empty, doc(i)), DeleteOneModel(empty)) }.flatten())
                    r.insertedCount shouldBe 300
                    r.matchedCount shouldBe 300
                    r.modifiedCount shouldBe 300
                    r.deletedCount shouldBe 300
                    val models = List(1_000) { i ->
                        val ns = MongoNamespace("perftest", "corpus_${i % 10 + 1}")
                        when (i % 3) {
                            0 -> OfficialClientModel.insertOne(ns, doc(i))
                            1 -> OfficialClientModel.replaceOne(ns, empty, doc(i))
                            else -> OfficialClientModel.deleteOne(ns, empty)
                        }
                    }
                    val cr = client.bulkWrite(models)
                    cr.insertedCount shouldBe 334
                    cr.matchedCount shouldBe 333
                    cr.modifiedCount shouldBe 333
                    cr.deletedCount shouldBe 333
                    cr.upsertedCount shouldBe 0
                }
                val cluster = MongoCluster(uri)
                try {
                    val c = cluster.database("perftest").collection("corpus")
                    val r = c.bulkWrite(List(200) { i -> listOf(WriteModel.InsertOne(doc(i)), WriteModel.ReplaceOne(empty, doc(i)), WriteModel.DeleteOne(empty)) }.flatten())
                    r shouldBe BulkWriteResult.Acknowledged(200, 200, 200, 200, 0, emptyMap(), (r as BulkWriteResult.Acknowledged).insertedIds)
                    r.insertedIds.size shouldBe 200
                    val models = List(100) { i ->
                        val ns = "perftest.corpus_${i % 10 + 1}"
                        ClientNamespacedWriteModel.of(ns, if (i % 2 == 0) WriteModel.InsertOne(doc(i)) else WriteModel.DeleteOne(empty))
                    }
                    cluster.bulkWrite(models) shouldBe ClientBulkWriteResult.Acknowledged(50, 0, 0, 0, 50, null)
                } finally {
                    cluster.closeSuspending()
                }
            }
        } finally {
            server.close()
            thread.join(5_000)
        }
    }

    test("a bulk-write task's models are benchmarking.md's: inserts, or insert/replace/delete per copy, the client mixed task over corpus_1..corpus_10") {
        val d = BsonDocument("x", BsonInt32(1))
        val inserts = BulkOp.of(WorkloadTask.SMALL_DOC_COLLECTION_BULK_WRITE_INSERT, d, copies = true)
        inserts.size shouldBe 10_000
        inserts.all { it is BulkOp.Insert && it.collection == "corpus" && it.document == d && it.document !== d } shouldBe true
        BulkOp.of(WorkloadTask.LARGE_DOC_CLIENT_BULK_WRITE_INSERT, d, copies = false).map { (it as BulkOp.Insert).document === d } shouldBe List(10) { true }
        val mixed = BulkOp.of(WorkloadTask.SMALL_DOC_CLIENT_BULK_WRITE_MIXED, d, copies = false)
        mixed.size shouldBe 30_000
        mixed.take(6) shouldBe listOf(BulkOp.Insert("corpus_1", d), BulkOp.Replace("corpus_1", d), BulkOp.Delete("corpus_1"), BulkOp.Insert("corpus_2", d), BulkOp.Replace("corpus_2", d), BulkOp.Delete("corpus_2"))
        mixed[3 * 9 + 2] shouldBe BulkOp.Delete("corpus_10")
        mixed[3 * 10] shouldBe BulkOp.Insert("corpus_1", d)
        BulkOp.of(WorkloadTask.SMALL_DOC_COLLECTION_BULK_WRITE_MIXED, d, copies = false).map { it.collection }.toSet() shouldBe setOf("corpus")
        BulkOp.expectedAcknowledged(mixed) shouldBe 30_000
        // scored as 20,000 operations (insert + replace) of 275 bytes
        WorkloadTask.SMALL_DOC_COLLECTION_BULK_WRITE_MIXED.datasetBytes shouldBe 275L * 20_000
        BenchMain.runsOn(Scenario.SMALL_DOC_CLIENT_BULK_WRITE_MIXED, "mongo-java-server") shouldBe false
        BenchMain.runsOn(Scenario.SMALL_DOC_CLIENT_BULK_WRITE_INSERT, "canned") shouldBe true
        BenchMain.runsOn(Scenario.SMALL_DOC_COLLECTION_BULK_WRITE_MIXED, "mongo-java-server") shouldBe true
    }

    test("a bulk-write iteration fails when the server acknowledges fewer writes than the task's models") {
        class ShortAck(task: WorkloadTask) : DocumentTaskOps(task, null) {
            var collectionsCreated = mutableListOf<String>()
            override suspend fun dropDatabase() = Unit
            override suspend fun dropCollection() = Unit
            override suspend fun createCollection(name: String) {
                collectionsCreated += name
            }
            override suspend fun insertOne(document: BsonDocument) = Unit
            override suspend fun insertMany(documents: List<BsonDocument>) = Unit
            override suspend fun findOneById(id: Int) = true
            override suspend fun findAll() = 0
            override fun collectionBulkWrite(ops: List<BulkOp>) = PreparedBulkWrite { ops.size.toLong() - 1 }
            override fun clientBulkWrite(ops: List<BulkOp>) = PreparedBulkWrite { ops.size.toLong() }
            override fun close() = Unit
        }
        System.setProperty("bench.unpacked", Files.createTempDirectory("bench-data").toString())
        val cmd = CellCommand(Scenario.SMALL_DOC_COLLECTION_BULK_WRITE_MIXED, count = 1)
        shouldThrow<IllegalStateException> { TaskIterations.measure(cmd, WorkloadTask.SMALL_DOC_COLLECTION_BULK_WRITE_MIXED, ShortAck(WorkloadTask.SMALL_DOC_COLLECTION_BULK_WRITE_MIXED)) }
            .message shouldContain "29999 writes acknowledged, expected 30000"
        val client = ShortAck(WorkloadTask.SMALL_DOC_CLIENT_BULK_WRITE_MIXED)
        TaskIterations.measure(cmd.copy(scenario = Scenario.SMALL_DOC_CLIENT_BULK_WRITE_MIXED), WorkloadTask.SMALL_DOC_CLIENT_BULK_WRITE_MIXED, client).getValue("iterations") shouldBe 1.0
        client.collectionsCreated shouldBe List(10) { "corpus_${it + 1}" }
    }

    test("the bulk-write tasks run their phases through Mooring, its Java facade and the sync and reactive drivers against the canned server") {
        System.setProperty("bench.unpacked", Files.createTempDirectory("bench-data").toString())
        val server = CannedServer.bind(BsonDocument("a", BsonInt32(1)), corpusSize = 10)
        val thread = Thread(server::run, "canned-test").apply { isDaemon = true; start() }
        try {
            val uri = "mongodb://127.0.0.1:${server.port}/?"
            for (task in listOf(WorkloadTask.SMALL_DOC_COLLECTION_BULK_WRITE_MIXED, WorkloadTask.SMALL_DOC_CLIENT_BULK_WRITE_MIXED, WorkloadTask.LARGE_DOC_CLIENT_BULK_WRITE_INSERT)) {
                val cmd = CellCommand(task.scenario, count = 2, warmupIterations = 1, target = uri)
                for (ops in listOf(MooringWorkload(task, uri), MooringJavaWorkload(task, uri), SyncWorkload(task, uri), ReactiveWorkload(task, uri))) {
                    val m = TaskIterations.measure(cmd, task, ops)
                    m.getValue("iterations") shouldBe 2.0
                    m.keys shouldBe setOf("medianMs", "mbPerSec", "cpuUsPerMb", "allocBytesPerDoc", "iterations")
                }
            }
        } finally {
            server.close()
            thread.join(5_000)
        }
    }

    test("the GridFS tasks upload and download the whole file through Mooring, its Java facade and the sync and reactive drivers on mongo-java-server") {
        val server = MongoServer(MemoryBackend())
        server.bind("127.0.0.1", 0)
        try {
            val uri = "mongodb://127.0.0.1:${server.localAddress.port}/?"
            val data = ByteArray(600 * 1024 + 7) { (it * 31).toByte() } // three chunks of 255 KiB, the last one short
            fun files(): List<BsonDocument> = MongoClients.create(uri).use { client ->
                client.getDatabase("perftest").getCollection("fs.files", BsonDocument::class.java).find().toList().sortedBy { it.getString("filename").value }
            }
            for (task in listOf(WorkloadTask.GRIDFS_UPLOAD, WorkloadTask.GRIDFS_DOWNLOAD)) {
                val cmd = CellCommand(task.scenario, count = 2, warmupIterations = 1, target = uri)
                for (ops in listOf(MooringGridFs(task, uri, data), MooringJavaGridFs(task, uri, data), SyncGridFs(task, uri, data), ReactiveGridFs(task, uri, data))) {
                    TaskIterations.measure(cmd, task, ops).getValue("iterations") shouldBe 2.0
                    // upload: the bucket dropped before each iteration, then the 1-byte file; download: setup's one upload
                    val expected = if (task == WorkloadTask.GRIDFS_UPLOAD) listOf("gridfstest" to data.size.toLong(), "one-byte" to 1L) else listOf("gridfstest" to data.size.toLong())
                    files().map { it.getString("filename").value to it.getNumber("length").longValue() } shouldBe expected
                }
            }
        } finally {
            server.shutdownNow()
        }
    }

    test("GridFS runs on mongo-java-server only, without the coroutine driver; quick mode runs the collection mixed task shorter and without zstd") {
        BenchMain.runsOn(Scenario.GRIDFS_UPLOAD, "canned") shouldBe false
        BenchMain.runsOn(Scenario.GRIDFS_DOWNLOAD, "mongo-java-server") shouldBe true
        Library.KOTLIN_COROUTINE.measures(Scenario.GRIDFS_UPLOAD) shouldBe false
        Library.KOTLIN_COROUTINE.measures(Scenario.SMALL_DOC_CLIENT_BULK_WRITE_MIXED) shouldBe true
        Library.MOORING_JAVA.measures(Scenario.GRIDFS_DOWNLOAD) shouldBe true
        Library.MOORING_JAVA.measures(Scenario.FIND_MANY) shouldBe true
        val quick = BenchPlan.quick()
        quick.compresses(Scenario.SMALL_DOC_COLLECTION_BULK_WRITE_MIXED, "zstd") shouldBe false
        quick.compresses(Scenario.SMALL_DOC_COLLECTION_BULK_WRITE_MIXED, "none") shouldBe true
        quick.compresses(Scenario.SMALL_DOC_CLIENT_BULK_WRITE_MIXED, "zstd") shouldBe false // quick mode has no zstd cell at all
        BenchPlan.full().compresses(Scenario.SMALL_DOC_CLIENT_BULK_WRITE_MIXED, "zstd") shouldBe true
        quick.iterations(Scenario.SMALL_DOC_COLLECTION_BULK_WRITE_MIXED) shouldBe (1 to 2)
        quick.iterations(Scenario.FIND_MANY) shouldBe (1 to 4)
        BenchPlan.full().compresses(Scenario.SMALL_DOC_COLLECTION_BULK_WRITE_MIXED, "zstd") shouldBe true
    }

    test("quick mode scales find one, small insertOne and the collection mixed bulk write down, runs no zstd cell; full mode runs the workload cells in its first repetition only") {
        val quick = BenchPlan.quick()
        val full = BenchPlan.full()
        for (server in listOf("canned", "mongo-java-server")) {
            quick.operations(Scenario.FIND_ONE_BY_ID, server) shouldBe 2_000
            quick.operations(Scenario.SMALL_DOC_INSERT_ONE, server) shouldBe 2_000
            quick.operations(Scenario.LARGE_DOC_INSERT_ONE, server) shouldBe 0
            quick.operations(Scenario.SMALL_DOC_BULK_INSERT, server) shouldBe 0
            full.operations(Scenario.FIND_ONE_BY_ID, server) shouldBe 0
            full.operations(Scenario.SMALL_DOC_INSERT_ONE, server) shouldBe 0
            quick.operations(Scenario.SMALL_DOC_COLLECTION_BULK_WRITE_MIXED, server) shouldBe 2_000
        }
        // a scaled mixed task: an insert, a replace and a delete per copy, as the whole task
        BulkOp.of(WorkloadTask.SMALL_DOC_COLLECTION_BULK_WRITE_MIXED, BsonDocument("x", BsonString("y")), copies = false, count = 2_000).size shouldBe 6_000
        for (task in quick.workloads) quick.compresses(task, "zstd") shouldBe false
        full.workloadRepetitions shouldBe 1
        full.repetitions shouldBe 3
        quick.workloadRepetitions shouldBe quick.repetitions
        // a task of one command carrying many documents is never scaled: its documents are its size
        shouldThrow<IllegalArgumentException> { SyncWorkload(WorkloadTask.LARGE_DOC_BULK_INSERT, "mongodb://127.0.0.1:1", 5) }

        System.setProperty("bench.unpacked", Files.createTempDirectory("bench-data").toString())
        val server = CannedServer.bind(BsonDocument("text", BsonString("t")), corpusSize = 10_000)
        val thread = Thread(server::run, "canned-test").apply { isDaemon = true; start() }
        try {
            val uri = "mongodb://127.0.0.1:${server.port}/"
            for (task in listOf(WorkloadTask.FIND_ONE_BY_ID, WorkloadTask.SMALL_DOC_INSERT_ONE)) {
                val row = TaskIterations.measure(CellCommand(task.scenario, count = 1, target = uri, operations = 2_000), task, MooringWorkload(task, uri, 2_000))
                row.getValue("operations") shouldBe 2_000.0
                row.getValue("iterations") shouldBe 1.0
            }
            // the floor's scaled find one reads as many documents as it asked for (it checks its own count)
            val floor = TaskIterations.measure(CellCommand(Scenario.FIND_ONE_BY_ID, count = 1, target = uri, operations = 2_000), WorkloadTask.FIND_ONE_BY_ID, FloorFind(WorkloadTask.FIND_ONE_BY_ID, uri, false, 2_000))
            floor.getValue("operations") shouldBe 2_000.0
        } finally {
            server.close()
            thread.join(5_000)
        }
    }

    test("the Java facade runs the find and insert tasks' phases against the canned server, as a Java caller would") {
        System.setProperty("bench.unpacked", Files.createTempDirectory("bench-data").toString())
        val server = CannedServer.bind(BsonDocument("text", BsonString("t")), corpusSize = 10_000)
        val thread = Thread(server::run, "canned-test").apply { isDaemon = true; start() }
        try {
            for (options in listOf("", "compressors=zstd")) {
                val uri = "mongodb://127.0.0.1:${server.port}/?$options"
                for (task in listOf(WorkloadTask.FIND_ONE_BY_ID, WorkloadTask.FIND_MANY, WorkloadTask.SMALL_DOC_INSERT_ONE, WorkloadTask.LARGE_DOC_BULK_INSERT)) {
                    // the tasks check their own results: a find by _id that finds nothing, or a find-many short of 10,000, fails the iteration
                    TaskIterations.measure(CellCommand(task.scenario, count = 1, target = uri), task, MooringJavaWorkload(task, uri)).getValue("iterations") shouldBe 1.0
                }
            }
        } finally {
            server.close()
            thread.join(5_000)
        }
    }

    test("the ODM tasks run their phases through Mooring and the coroutine driver on mongo-java-server and leave the documents odm-benchmarking.md says") {
        System.setProperty("bench.unpacked", Files.createTempDirectory("bench-data").toString())
        val server = MongoServer(MemoryBackend())
        server.bind("127.0.0.1", 0)
        val n = 20 // the spec's 10,000 operations scaled down
        try {
            val uri = "mongodb://127.0.0.1:${server.localAddress.port}/?"
            MongoClients.create(uri).use { client ->
                val db = client.getDatabase("perftest")
                fun stored(c: String): List<BsonDocument> = db.getCollection(c, BsonDocument::class.java).find().toList()
                fun uniqueIndexOn(c: String): List<String> = db.getCollection(c).listIndexes(BsonDocument::class.java)
                    .filter { it.getBoolean("unique", org.bson.BsonBoolean.FALSE).value }.map { it.getDocument("key").keys.single() }
                val smallFields = listOf("_id") + List(13) { "field${it + 1}" }
                for (task in WorkloadTask.entries.filter { it.isOdm }) {
                    val cmd = CellCommand(task.scenario, count = 2, warmupIterations = 1, target = uri)
                    for (ops in listOf(MooringOdm(task, uri, n), CoroutineOdm(task, uri, n))) {
                        val m = TaskIterations.measure(cmd, task, ops)
                        m.getValue("iterations") shouldBe 2.0
                        m.keys shouldBe setOf("medianMs", "mbPerSec", "cpuUsPerMb", "allocBytesPerDoc", "iterations")
                        val what = "${task.scenario.key} through ${ops::class.simpleName}"
                        when (task) {
                            WorkloadTask.ODM_FLAT_SMALL_MODEL_CREATION, WorkloadTask.ODM_FLAT_SMALL_MODEL_UPDATE, WorkloadTask.ODM_FLAT_SMALL_MODEL_FIND_BY_FILTER -> {
                                val docs = stored(OdmTaskOps.SMALL)
                                withClue(what) {
                                    docs.size shouldBe n
                                    docs.map { it.getObjectId("_id").value }.toSet().size shouldBe n
                                    docs.all { it.keys.toList() == smallFields } shouldBe true // no field_fk: a null reference is not stored
                                    docs.map { it.getString("field1").value }.toSet() shouldBe setOf(if (task == WorkloadTask.ODM_FLAT_SMALL_MODEL_UPDATE) "updated_value" else "miNVpaKW")
                                    docs.map { it.getInt32("field13").value }.toSet() shouldBe setOf(74094448)
                                }
                            }
                            WorkloadTask.ODM_FLAT_SMALL_MODEL_FIND_FOREIGN_KEY_BY_FILTER -> withClue(what) {
                                val fks = stored(OdmTaskOps.FOREIGN_KEY)
                                fks.size shouldBe n
                                fks.all { it.keys.toList() == listOf("_id", "name") } shouldBe true
                                stored(OdmTaskOps.SMALL).map { it.getObjectId("field_fk").value }.sorted() shouldBe fks.map { it.getObjectId("_id").value }.sorted()
                                uniqueIndexOn(OdmTaskOps.SMALL) shouldBe listOf("field_fk")
                            }
                            else -> {
                                val docs = stored(OdmTaskOps.NESTED)
                                withClue(what) {
                                    docs.size shouldBe n
                                    docs.all { it.getArray("embedded_str_doc_array").size == 2 && it.getDocument("embedded_int_doc_14").size == 15 } shouldBe true
                                    val field1 = if (task == WorkloadTask.ODM_NESTED_LARGE_MODEL_UPDATE_NESTED) "updated_value" else "kj9\$mxz#p2qw8r*vn4@h7c&u1s"
                                    docs.map { it.getDocument("embedded_str_doc_1").getString("field1").value }.toSet() shouldBe setOf(field1)
                                    docs.map { it.getDocument("embedded_str_doc_2").getString("field1").value }.toSet() shouldBe setOf("x6@m0k#z1w2p\$q3v*n4r7j&h8c9u5s")
                                    if (task != WorkloadTask.ODM_NESTED_LARGE_MODEL_CREATION) {
                                        // each saved model's embedded documents carry their own unique_id
                                        docs.flatMap { d -> d.getArray("embedded_str_doc_array").map { it.asDocument().getString("unique_id").value } }.toSet().size shouldBe 2 * n
                                        docs.map { it.getDocument("embedded_str_doc_1").getString("unique_id").value }.toSet().size shouldBe n
                                    }
                                    when (task) {
                                        WorkloadTask.ODM_NESTED_FIND_NESTED_BY_FILTER -> uniqueIndexOn(OdmTaskOps.NESTED) shouldBe listOf("embedded_str_doc_1.unique_id")
                                        WorkloadTask.ODM_NESTED_FIND_NESTED_ARRAY_BY_FILTER -> uniqueIndexOn(OdmTaskOps.NESTED) shouldBe listOf("embedded_str_doc_array.unique_id")
                                        else -> Unit
                                    }
                                }
                            }
                        }
                    }
                }
            }
        } finally {
            server.shutdownNow()
        }
    }

    test("an ODM iteration fails when a find does not return the model it looks for, or an update matches nothing") {
        class Missing(task: WorkloadTask) : OdmTaskOps(task, null, 3) {
            override suspend fun dropDatabase() = Unit
            override suspend fun dropCollection(collection: String) = Unit
            override suspend fun createUniqueIndex(collection: String, field: String) = Unit
            override suspend fun insertSmall(model: SmallModel) = Unit
            override suspend fun insertManySmall(models: List<SmallModel>) = Unit
            override suspend fun insertManyForeignKeys(models: List<ForeignKeyModel>) = Unit
            override suspend fun insertNested(model: LargeNestedModel) = Unit
            override suspend fun insertManyNested(models: List<LargeNestedModel>) = Unit
            override suspend fun setField(collection: String, id: ObjectId, field: String, value: String) = 0L
            override suspend fun findSmall(field: String, value: ObjectId): SmallModel? = null
            override suspend fun findNested(field: String, value: String): LargeNestedModel? = null
            override fun close() = Unit
        }
        System.setProperty("bench.unpacked", Files.createTempDirectory("bench-data").toString())
        for ((task, message) in listOf(
            WorkloadTask.ODM_FLAT_SMALL_MODEL_FIND_BY_FILTER to "no model with _id",
            WorkloadTask.ODM_FLAT_SMALL_MODEL_FIND_FOREIGN_KEY_BY_FILTER to "no model with field_fk",
            WorkloadTask.ODM_NESTED_FIND_NESTED_ARRAY_BY_FILTER to "no model with embedded_str_doc_array.unique_id",
            WorkloadTask.ODM_NESTED_LARGE_MODEL_UPDATE_NESTED to "matched 0 documents",
        )) {
            shouldThrow<IllegalStateException> { TaskIterations.measure(CellCommand(task.scenario, count = 1), task, Missing(task)) }.message shouldContain message
        }
    }

    test("the ODM creation and update tasks run on the canned server with and without zstd; its finds do not answer with the models, so the find tasks run on mongo-java-server only") {
        System.setProperty("bench.unpacked", Files.createTempDirectory("bench-data").toString())
        val server = CannedServer.bind(BsonDocument("a", BsonInt32(1)), corpusSize = 10)
        val thread = Thread(server::run, "canned-test").apply { isDaemon = true; start() }
        try {
            for (options in listOf("", "compressors=zstd")) {
                val uri = "mongodb://127.0.0.1:${server.port}/?$options"
                for (task in WorkloadTask.entries.filter { it.isOdm && !it.isOdmFind }) {
                    for (ops in listOf(MooringOdm(task, uri, 50), CoroutineOdm(task, uri, 50))) {
                        TaskIterations.measure(CellCommand(task.scenario, count = 1, target = uri), task, ops).getValue("iterations") shouldBe 1.0
                    }
                }
            }
        } finally {
            server.close()
            thread.join(5_000)
        }
        for (task in WorkloadTask.entries.filter { it.isOdm }) {
            BenchMain.runsOn(task.scenario, "mongo-java-server") shouldBe true
            BenchMain.runsOn(task.scenario, "canned") shouldBe !task.isOdmFind
            Library.entries.filter { it.measures(task.scenario) }.toSet() shouldBe setOf(Library.MOORING, Library.KOTLIN_COROUTINE)
            BenchPlan.quick().iterations(task.scenario) shouldBe (1 to 2)
            BenchPlan.quick().compresses(task.scenario, "zstd") shouldBe false
            BenchPlan.full().compresses(task.scenario, "zstd") shouldBe true
            BenchPlan.quick().operations(task.scenario, "canned") shouldBe 2_000
            BenchPlan.full().operations(task.scenario, "canned") shouldBe 0
        }
        BenchPlan.quick().operations(Scenario.FIND_MANY, "canned") shouldBe 0
        WorkloadTask.entries.filter { it.isOdmFind }.map { it.scenario.key } shouldBe listOf(
            "odm-flat-small-model-find-by-filter", "odm-flat-small-model-find-foreign-key-by-filter",
            "odm-nested-large-model-find-nested-by-filter", "odm-nested-large-model-find-nested-array-by-filter",
        )
        WorkloadTask.ODM_NESTED_LARGE_MODEL_UPDATE_NESTED.datasetBytes shouldBe 13L * 10_000
    }

    // ---- the parallel suite (benchmarking.md "Parallel") ----

    /** A scaled-down LDJSON_MULTI: [files] files of [perFile] tweet-like lines each, of varying sizes. */
    fun ldjsonFiles(dir: java.io.File, files: Int, perFile: Int): List<java.io.File> = List(files) { f ->
        java.io.File(dir, "ldjson%03d.txt".format(f)).also { file ->
            file.writeText((0 until perFile).joinToString("\n", postfix = "\n") { i -> """{"text": "${"t".repeat(10 + (f * perFile + i) % 50)}", "n": ${f * perFile + i}, "user": {"id": $i, "tags": ["a", "b"]}}""" })
        }
    }

    test("the LDJSON tasks import every document and export files whose lines parse back, through Mooring, its Java facade, the sync, reactive and coroutine drivers on mongo-java-server") {
        val server = MongoServer(MemoryBackend())
        server.bind("127.0.0.1", 0)
        val dir = Files.createTempDirectory("ldjson").toFile()
        try {
            val uri = "mongodb://127.0.0.1:${server.localAddress.port}/?"
            val files = ldjsonFiles(java.io.File(dir, "in").also { it.mkdirs() }, files = 3, perFile = 40)
            val sourceNs = files.flatMap { it.readLines() }.map { BsonDocument.parse(it).getInt32("n").value }.sorted()
            fun stored(c: String): List<BsonDocument> = MongoClients.create(uri).use { it.getDatabase("perftest").getCollection(c, BsonDocument::class.java).find().toList() }
            for (task in listOf(WorkloadTask.LDJSON_MULTI_FILE_IMPORT, WorkloadTask.LDJSON_MULTI_FILE_EXPORT)) {
                val cmd = CellCommand(task.scenario, count = 2, warmupIterations = 1, target = uri, operations = 3)
                for ((lib, ops) in listOf(
                    "mooring" to MooringParallel(task, uri, files, java.io.File(dir, "mooring")),
                    "mooring-java" to MooringJavaParallel(task, uri, files, java.io.File(dir, "mooring-java")),
                    "java-sync" to SyncParallel(task, uri, files, java.io.File(dir, "java-sync")),
                    "java-reactive" to ReactiveParallel(task, uri, files, java.io.File(dir, "java-reactive")),
                    "kotlin-coroutine" to CoroutineParallel(task, uri, files, java.io.File(dir, "kotlin-coroutine")),
                )) {
                    withClue("$lib ${task.scenario.key}") {
                        val m = TaskIterations.measure(cmd, task, ops)
                        m.getValue("iterations") shouldBe 2.0
                        m.getValue("operations") shouldBe 3.0
                        if (task == WorkloadTask.LDJSON_MULTI_FILE_IMPORT) {
                            // the last iteration's insert: every document of every file, nothing twice (corpus dropped before each)
                            stored("corpus").map { it.getInt32("n").value }.sorted() shouldBe sourceNs
                        } else {
                            // setup numbered the documents 0..119 in file order; the export wrote file i as _id 40i..40i+39
                            val out = java.io.File(dir, lib).listFiles()!!.sortedBy { it.name }
                            out.map { it.name } shouldBe listOf("ldjson000.txt", "ldjson001.txt", "ldjson002.txt")
                            for ((i, f) in out.withIndex()) {
                                val docs = f.readLines().map(BsonDocument::parse)
                                docs.map { it.getInt32("_id").value }.sorted() shouldBe (40 * i until 40 * (i + 1)).toList()
                            }
                            out.flatMap { it.readLines() }.map { BsonDocument.parse(it).getInt32("n").value }.sorted() shouldBe sourceNs
                            stored(WorkloadTask.EXPORT_COLLECTION).size shouldBe 120
                        }
                    }
                }
            }
        } finally {
            server.shutdownNow()
            dir.deleteRecursively()
        }
    }

    test("the GridFS multi-file tasks upload files from disk and download them into files, byte for byte, through Mooring, its Java facade and the sync and reactive drivers on mongo-java-server") {
        val server = MongoServer(MemoryBackend())
        server.bind("127.0.0.1", 0)
        val dir = Files.createTempDirectory("gridfs-multi").toFile()
        try {
            val uri = "mongodb://127.0.0.1:${server.localAddress.port}/?"
            val inDir = java.io.File(dir, "in").also { it.mkdirs() }
            // three chunks of 255 KiB and a short one; one exactly a chunk; one short of a chunk
            val files = listOf(3 * 261_120 + 11, 261_120, 1_000).mapIndexed { k, size ->
                java.io.File(inDir, "file$k.txt").also { f -> f.writeBytes(ByteArray(size) { (it * 31 + k).toByte() }) }
            }
            fun stored(): List<Pair<String, Long>> = MongoClients.create(uri).use { client ->
                client.getDatabase("perftest").getCollection("fs.files", BsonDocument::class.java).find().toList()
                    .map { it.getString("filename").value to it.getNumber("length").longValue() }.sortedBy { it.first }
            }
            for (task in listOf(WorkloadTask.GRIDFS_MULTI_FILE_UPLOAD, WorkloadTask.GRIDFS_MULTI_FILE_DOWNLOAD)) {
                val cmd = CellCommand(task.scenario, count = 2, warmupIterations = 1, target = uri, operations = 3)
                for ((lib, ops) in listOf(
                    "mooring" to MooringParallel(task, uri, files, java.io.File(dir, "out/mooring")),
                    "mooring-java" to MooringJavaParallel(task, uri, files, java.io.File(dir, "out/mooring-java")),
                    "java-sync" to SyncParallel(task, uri, files, java.io.File(dir, "out/java-sync")),
                    "java-reactive" to ReactiveParallel(task, uri, files, java.io.File(dir, "out/java-reactive")),
                )) {
                    withClue("$lib ${task.scenario.key}") {
                        TaskIterations.measure(cmd, task, ops).getValue("iterations") shouldBe 2.0
                        val uploaded = files.map { it.name to it.length() }
                        if (task == WorkloadTask.GRIDFS_MULTI_FILE_UPLOAD) {
                            // the bucket dropped before each iteration, then the 1-byte file, then the three files
                            stored() shouldBe (uploaded + ("one-byte" to 1L)).sortedBy { it.first }
                        } else {
                            stored() shouldBe uploaded
                            for (f in files) java.io.File(dir, "out/$lib/${f.name}").readBytes().contentEquals(f.readBytes()) shouldBe true
                        }
                    }
                }
            }
        } finally {
            server.shutdownNow()
            dir.deleteRecursively()
        }
    }

    test("the canned server answers a find on the export collection with its LDJSON documents, each cursor on its own, and the export task runs against it") {
        // 300 documents of up to ~60 KB: more than one 16 MiB getMore would hold is not needed; batchSize splits them
        val docs = List(300) { i -> BsonDocument("_id", BsonInt32(i)).append("text", BsonString("x".repeat(i * 200))) }
        val server = CannedServer.bind(BsonDocument("a", BsonInt32(1)), corpusSize = 10, exportDocuments = docs)
        val thread = Thread(server::run, "canned-test").apply { isDaemon = true; start() }
        val dir = Files.createTempDirectory("canned-export").toFile()
        try {
            for (options in listOf("", "compressors=zstd")) {
                val uri = "mongodb://127.0.0.1:${server.port}/?$options"
                MongoClients.create(uri).use { client ->
                    val c = client.getDatabase("perftest").getCollection(WorkloadTask.EXPORT_COLLECTION, BsonDocument::class.java)
                    c.find(ParallelTaskOps.exportFilter(3, 5_000)).toList().map { it.getInt32("_id").value } shouldBe (0 until 300).toList()
                    // two cursors open at once, their getMores interleaved: each keeps its own position
                    val a = c.find().batchSize(50).iterator()
                    val b = c.find().batchSize(70).iterator()
                    val seenA = ArrayList<Int>()
                    val seenB = ArrayList<Int>()
                    while (a.hasNext() || b.hasNext()) {
                        if (a.hasNext()) seenA += a.next().getInt32("_id").value
                        if (b.hasNext()) seenB += b.next().getInt32("_id").value
                    }
                    seenA shouldBe (0 until 300).toList()
                    seenB shouldBe (0 until 300).toList()
                    // the find-many collection still gets its own canned document
                    client.getDatabase("perftest").getCollection("corpus", BsonDocument::class.java).find().toList() shouldBe List(10) { BsonDocument("a", BsonInt32(1)) }
                }
                val cluster = MongoCluster(uri)
                try {
                    cluster.database("perftest").collection(WorkloadTask.EXPORT_COLLECTION).find().count() shouldBe 300
                } finally {
                    cluster.closeSuspending()
                }
                // the export on the canned server: setup's inserts acknowledged, each file the 300 canned documents
                val task = WorkloadTask.LDJSON_MULTI_FILE_EXPORT
                val files = ldjsonFiles(java.io.File(dir, "in").also { it.mkdirs() }, files = 4, perFile = 300)
                for (ops in listOf(MooringParallel(task, uri, files, java.io.File(dir, "m")), SyncParallel(task, uri, files, java.io.File(dir, "s")))) {
                    TaskIterations.measure(CellCommand(task.scenario, count = 1, target = uri, operations = 4), task, ops).getValue("iterations") shouldBe 1.0
                }
                java.io.File(dir, "m").listFiles()!!.sumOf { it.readLines().map(BsonDocument::parse).size } shouldBe 1_200
            }
        } finally {
            server.close()
            thread.join(5_000)
            dir.deleteRecursively()
        }
    }

    test("a parallel cell is scored on the spec's dataset size scaled by the share of files it uses; where the tasks run and how many files each mode uses") {
        // LDJSON: 565 MB for 100 files of 5,000 documents; 10 files: 56.5 MB and 50,000 documents per iteration
        val m = TaskIterations.summarize(WorkloadTask.LDJSON_MULTI_FILE_IMPORT, longArrayOf(2_000_000_000, 1_000_000_000), 2_260_000_000, null, 10_000_000, operations = 10)
        m.getValue("mbPerSec") shouldBe (56.5 / 1.0 plusOrMinus 1e-9) // nearest rank of 2: the first, 1 s
        m.getValue("cpuUsPerMb") shouldBe (2_260_000.0 / (56.5 * 2) plusOrMinus 1e-6)
        m.getValue("allocBytesPerDoc") shouldBe (10_000_000.0 / (50_000 * 2) plusOrMinus 1e-9)
        m.getValue("operations") shouldBe 10.0
        // GridFS multi: 262.144 MB for 50 files; 10 files: 52.4288 MB, allocation per file
        val g = TaskIterations.summarize(WorkloadTask.GRIDFS_MULTI_FILE_DOWNLOAD, longArrayOf(500_000_000), 0, null, 1_000, operations = 10)
        g.getValue("mbPerSec") shouldBe (52.4288 / 0.5 plusOrMinus 1e-9)
        g.getValue("allocBytesPerDoc") shouldBe 100.0
        TaskIterations.summarize(WorkloadTask.LDJSON_MULTI_FILE_EXPORT, longArrayOf(1_000_000_000), 0, null, 0).getValue("mbPerSec") shouldBe (565.0 plusOrMinus 1e-9)
        shouldThrow<IllegalArgumentException> { TaskIterations.summarize(WorkloadTask.GRIDFS_MULTI_FILE_UPLOAD, longArrayOf(1), 1, null, 1, operations = 51) }

        WorkloadTask.entries.filter { it.isParallel }.map { it.scenario.key } shouldBe listOf(
            "ldjson-multi-file-import", "ldjson-multi-file-export", "gridfs-multi-file-upload", "gridfs-multi-file-download",
        )
        for (task in WorkloadTask.entries.filter { it.isParallel }) {
            BenchMain.runsOn(task.scenario, "canned") shouldBe task.isLdjson
            BenchMain.runsOn(task.scenario, "mongo-java-server") shouldBe true
            Library.KOTLIN_COROUTINE.measures(task.scenario) shouldBe task.isLdjson
            Library.entries.filter { it.measures(task.scenario) && it != Library.KOTLIN_COROUTINE }.toSet() shouldBe
                setOf(Library.MOORING, Library.MOORING_JAVA, Library.JAVA_SYNC, Library.JAVA_REACTIVE)
            BenchPlan.quick().iterations(task.scenario) shouldBe (1 to 2)
            BenchPlan.full().iterations(task.scenario) shouldBe (1 to 3)
            BenchPlan.quick().compresses(task.scenario, "zstd") shouldBe false
            BenchPlan.quick().compresses(task.scenario, "none") shouldBe true
            BenchPlan.full().compresses(task.scenario, "zstd") shouldBe true
        }
        BenchPlan.quick().compresses(Scenario.FIND_MANY, "zstd") shouldBe false
        BenchPlan.full().compresses(Scenario.FIND_MANY, "zstd") shouldBe true
        val quick = BenchPlan.quick()
        val full = BenchPlan.full()
        quick.operations(Scenario.LDJSON_MULTI_FILE_IMPORT, "canned") shouldBe 5
        quick.operations(Scenario.LDJSON_MULTI_FILE_EXPORT, "mongo-java-server") shouldBe 5
        quick.operations(Scenario.GRIDFS_MULTI_FILE_UPLOAD, "mongo-java-server") shouldBe 10
        full.operations(Scenario.LDJSON_MULTI_FILE_IMPORT, "canned") shouldBe 0 // the whole dataset
        full.operations(Scenario.LDJSON_MULTI_FILE_EXPORT, "mongo-java-server") shouldBe 20 // the server's heap
        full.operations(Scenario.GRIDFS_MULTI_FILE_DOWNLOAD, "mongo-java-server") shouldBe 0
    }
})
