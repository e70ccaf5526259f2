package dev.mooring.integration.compression

import dev.mooring.cmap.ConnectionSettings
import dev.mooring.cmap.DefaultConnectionFactory
import dev.mooring.testkit.server.WireServer
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.longs.shouldBeGreaterThan
import io.kotest.matchers.shouldBe
import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString
import org.bson.RawBsonDocument
import org.bson.codecs.BsonDocumentCodec
import kotlin.random.Random
import kotlin.time.Duration.Companion.seconds

/**
 * Large messages (documents already encoded, as the driver's writes carry them) are encoded into
 * buffers the factory's connections share and give back once written: one buffer serves several
 * messages of different sizes, on several connections, compressed or not, and the server reads
 * each message whole.
 */
class LargeMessageSpec : FunSpec({
    timeout = 120.seconds.inWholeMilliseconds

    fun document(id: Int, bytes: Int, random: Random): RawBsonDocument {
        // half text that compresses, half random base-64 that does not
        val text = "large message ".repeat(bytes / 28)
        val noise = java.util.Base64.getEncoder().encodeToString(random.nextBytes(bytes / 4))
        return RawBsonDocument(BsonDocument("_id", BsonInt32(id)).append("text", BsonString(text)).append("noise", BsonString(noise)), BsonDocumentCodec())
    }

    for (compressor in listOf("none", "snappy", "zlib", "zstd")) {
        test("$compressor: large inserts of falling sizes on two connections reach the server whole, and the buffers are kept for the next") {
            val server = WireServer.start()
            if (compressor != "none") server.compressors = listOf(compressor)
            try {
                val settings = ConnectionSettings(connectTimeoutMS = 10_000, socketTimeoutMS = 30_000, compressors = if (compressor == "none") emptyList() else listOf(compressor))
                DefaultConnectionFactory(settings).use { f ->
                    val a = f.create(server.address, 1, 0).also { it.establish() }
                    val b = f.create(server.address, 2, 0).also { it.establish() }
                    val random = Random(42)
                    val sent = ArrayList<RawBsonDocument>()
                    var id = 0
                    // 3 MB, then 1 MB, then 300 KB messages: each later one is written into a buffer a larger one used
                    for ((round, size) in listOf(1_000_000, 330_000, 100_000).withIndex()) {
                        for (connection in listOf(a, b)) {
                            val docs = List(3) { document(++id, size, random) }
                            connection.command("db", BsonDocument("insert", BsonString("c")).append("documents", BsonArray(docs))).getInt32("n").value shouldBe 3
                            sent += docs
                        }
                        if (round == 0) f.sendBuffers.retainedCapacity shouldBeGreaterThan 1_000_000L
                    }
                    // a small command after them uses the connection's own buffer again
                    val found = a.command("db", BsonDocument("find", BsonString("c")).append("batchSize", BsonInt32(1_000)))
                        .getDocument("cursor").getArray("firstBatch").map { it.asDocument() }
                    found.size shouldBe sent.size
                    found.map { it.getInt32("_id").value } shouldBe sent.map { it.getInt32("_id").value }
                    for ((got, want) in found.zip(sent)) got shouldBe want
                    a.close()
                    b.close()
                }
                if (compressor != "none") server.counters.compressedCommandCount("insert") shouldBe 6
            } finally {
                server.close()
            }
        }
    }
})
