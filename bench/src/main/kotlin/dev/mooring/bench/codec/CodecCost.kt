package dev.mooring.bench.codec

import dev.mooring.cmap.internal.wire.BsonIn
import dev.mooring.cmap.internal.wire.BsonOut
import org.bson.BsonArray
import org.bson.BsonBinary
import org.bson.BsonBinaryReader
import org.bson.BsonBinaryWriter
import org.bson.BsonBoolean
import org.bson.BsonDateTime
import org.bson.BsonDocument
import org.bson.BsonDouble
import org.bson.BsonInt32
import org.bson.BsonInt64
import org.bson.BsonObjectId
import org.bson.BsonString
import org.bson.BsonTimestamp
import org.bson.codecs.BsonDocumentCodec
import org.bson.codecs.DecoderContext
import org.bson.codecs.EncoderContext
import org.bson.io.BasicOutputBuffer
import java.lang.management.ManagementFactory
import java.nio.ByteBuffer
import java.util.UUID

/**
 * The cost of cmap's hand-written BSON codec (`BsonIn` decodes replies, `BsonOut` encodes command
 * bodies) against `org.mongodb:bson`'s `BsonBinaryReader`/`BsonBinaryWriter` with the
 * `BsonDocumentCodec`, on the documents the driver's hot path handles: a ping and its reply, a
 * hello reply, an insert of 100 small documents and a find reply of 100 documents. Each pair is
 * measured in turn on this thread, [ROUNDS] times, after a warm-up; each round reports the thread's
 * CPU time and allocated bytes per document (`ThreadMXBean`), and the medians are printed with the
 * hand-written ÷ library ratio. Run it with `bench/run --codec`; results go to bench/README.
 */
object CodecCost {
    private const val ROUNDS = 7
    private val codec = BsonDocumentCodec()
    private val threads = ManagementFactory.getThreadMXBean() as com.sun.management.ThreadMXBean

    @JvmStatic
    fun main(args: Array<String>) {
        val cases = Fixtures.all()
        println("| document | direction | hand-written ns/doc | library ns/doc | ratio | hand-written B/doc | library B/doc |")
        println("|---|---|---|---|---|---|---|")
        for ((name, doc) in cases) {
            val bytes = libraryEncode(doc)
            check(handEncode(doc).contentEquals(bytes)) { "$name: the two encoders wrote different bytes" }
            check(BsonIn.decode(bytes, 0, bytes.size) == doc) { "$name: BsonIn decoded another document" }
            val iterations = (2_000_000 / bytes.size).coerceIn(2_000, 200_000)
            report(name, "decode", iterations, { BsonIn.decode(bytes, 0, bytes.size) }, { libraryDecode(bytes) })
            report(name, "encode", iterations, { handEncode(doc) }, { libraryEncode(doc) })
        }
    }

    private fun report(name: String, direction: String, iterations: Int, hand: () -> Any, library: () -> Any) {
        repeat(3) { measure(iterations, hand); measure(iterations, library) } // warm-up: both compiled by C2
        val h = ArrayList<Pair<Double, Double>>()
        val l = ArrayList<Pair<Double, Double>>()
        repeat(ROUNDS) {
            h += measure(iterations, hand)
            l += measure(iterations, library)
        }
        val hNs = h.map { it.first }.sorted()[ROUNDS / 2]
        val lNs = l.map { it.first }.sorted()[ROUNDS / 2]
        val hB = h.map { it.second }.sorted()[ROUNDS / 2]
        val lB = l.map { it.second }.sorted()[ROUNDS / 2]
        println("| $name | $direction | %.0f | %.0f | %.2f | %.0f | %.0f |".format(hNs, lNs, hNs / lNs, hB, lB))
    }

    /** CPU ns and allocated bytes per call of [op], over [iterations] calls on this thread. */
    private fun measure(iterations: Int, op: () -> Any): Pair<Double, Double> {
        var sink = 0
        val tid = Thread.currentThread().id
        val cpu0 = threads.currentThreadCpuTime
        val alloc0 = threads.getThreadAllocatedBytes(tid)
        for (i in 0 until iterations) sink += op().hashCode() and 1
        val cpu = threads.currentThreadCpuTime - cpu0
        val alloc = threads.getThreadAllocatedBytes(tid) - alloc0
        if (sink == -1) println(sink)
        return cpu.toDouble() / iterations to alloc.toDouble() / iterations
    }

    private fun libraryDecode(bytes: ByteArray): BsonDocument =
        BsonBinaryReader(ByteBuffer.wrap(bytes)).use { codec.decode(it, DecoderContext.builder().build()) }

    private fun libraryEncode(doc: BsonDocument): ByteArray {
        val out = BasicOutputBuffer(256)
        BsonBinaryWriter(out).use { codec.encode(it, doc, EncoderContext.builder().build()) }
        return out.toByteArray()
    }

    private fun handEncode(doc: BsonDocument): ByteArray {
        val out = BasicOutputBuffer(256)
        BsonOut.document(out, doc, 0)
        return out.toByteArray()
    }
}

/** The documents [CodecCost] measures: shaped like the driver's commands and a real server's replies. */
internal object Fixtures {
    private fun clusterTime() = BsonDocument("clusterTime", BsonTimestamp(1_700_000_000, 7))
        .append("signature", BsonDocument("hash", BsonBinary(ByteArray(20))).append("keyId", BsonInt64(7_300_000_000_000_000_000L)))

    fun all(): List<Pair<String, BsonDocument>> = listOf(
        "ping command" to BsonDocument("ping", BsonInt32(1)).append("\$db", BsonString("admin"))
            .append("lsid", BsonDocument("id", BsonBinary(UUID.randomUUID()))).append("\$clusterTime", clusterTime()),
        "ping reply" to BsonDocument("ok", BsonDouble(1.0)).append("\$clusterTime", clusterTime())
            .append("operationTime", BsonTimestamp(1_700_000_000, 7)),
        "hello reply" to hello(),
        "insert of 100" to BsonDocument("insert", BsonString("coll")).append("ordered", BsonBoolean.TRUE)
            .append("documents", BsonArray(List(100) { small(it) })).append("\$db", BsonString("db")),
        "find reply of 100" to BsonDocument("cursor", BsonDocument("firstBatch", BsonArray(List(100) { small(it) }))
            .append("id", BsonInt64(0)).append("ns", BsonString("db.coll"))).append("ok", BsonDouble(1.0)),
    )

    private fun small(i: Int) = BsonDocument("_id", BsonObjectId()).append("name", BsonString("user-$i"))
        .append("age", BsonInt32(20 + i % 50)).append("score", BsonDouble(i * 1.5)).append("active", BsonBoolean(i % 2 == 0))
        .append("created", BsonDateTime(1_700_000_000_000L + i)).append("tags", BsonArray(listOf(BsonString("a"), BsonString("b"))))
        .append("address", BsonDocument("city", BsonString("Lisbon")).append("zip", BsonString("1000-00$i")))

    private fun hello() = BsonDocument("topologyVersion", BsonDocument("processId", BsonObjectId()).append("counter", BsonInt64(6)))
        .append("hosts", BsonArray(listOf(BsonString("a:27017"), BsonString("b:27017"), BsonString("c:27017"))))
        .append("setName", BsonString("rs0")).append("setVersion", BsonInt32(1)).append("isWritablePrimary", BsonBoolean.TRUE)
        .append("secondary", BsonBoolean.FALSE).append("primary", BsonString("a:27017")).append("me", BsonString("a:27017"))
        .append("electionId", BsonObjectId()).append("lastWrite", BsonDocument("opTime", BsonDocument("ts", BsonTimestamp(1, 1)).append("t", BsonInt64(1)))
            .append("lastWriteDate", BsonDateTime(1_700_000_000_000L)))
        .append("maxBsonObjectSize", BsonInt32(16_777_216)).append("maxMessageSizeBytes", BsonInt32(48_000_000))
        .append("maxWriteBatchSize", BsonInt32(100_000)).append("localTime", BsonDateTime(1_700_000_000_000L))
        .append("logicalSessionTimeoutMinutes", BsonInt32(30)).append("connectionId", BsonInt32(12))
        .append("minWireVersion", BsonInt32(0)).append("maxWireVersion", BsonInt32(21)).append("readOnly", BsonBoolean.FALSE)
        .append("ok", BsonDouble(1.0)).append("\$clusterTime", clusterTime()).append("operationTime", BsonTimestamp(1, 1))
}
