package dev.mooring.bench.server

import com.github.luben.zstd.Zstd
import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonInt64
import org.bson.BsonString
import org.bson.RawBsonDocument
import java.nio.ByteBuffer
import java.nio.ByteOrder
import java.nio.channels.Selector
import java.nio.channels.ServerSocketChannel

/**
 * The workload tasks' canned-reply server: the [PingResponder] (one selector thread, pre-encoded
 * replies) answering, besides hello and ping, what the drivers' benchmark tasks send, without a
 * storage engine, so the client's own cost dominates:
 *
 * - `find` with an `_id` in its filter: one [document] in a closed cursor's first batch;
 * - `find` without one: a cursor over [corpusSize] copies of [document], its first batch the
 *   command's `batchSize` (101 by default) and each `getMore` its `batchSize` or as many as fit
 *   in 16 MiB (a server's batch limit); the connection remembers what is left;
 * - `insert`: `{n, ok: 1}` with n the documents sent (in a document sequence or the body's
 *   array), nothing stored;
 * - `update`: `{n, nModified, ok: 1}` and `delete`: `{n, ok: 1}`, n the statements sent: each is
 *   taken to match one document, as every replace and delete of the bulk-write tasks does (their
 *   models follow the insert of the document they find);
 * - `bulkWrite` (on `admin`, MongoDB 8.0's client bulk write, bulk-write.md's reply): `nInserted`,
 *   `nMatched` = `nModified`, `nDeleted` counted from the `ops` (each update or delete matching one
 *   document, as above), `nErrors: 0`, `nUpserted: 0` and an exhausted results cursor with an empty
 *   first batch (the drivers ask for errors only); the hello reply says wire version 25 (8.0) so
 *   the drivers send it;
 * - `create`, `drop`, `dropDatabase`, `killCursors`, `createIndexes`: `ok: 1`.
 *
 * With zstd (`compressors=zstd` in the client's URI) the hello reply agrees to `zstd` when the
 * client offers it, and a compressed request is answered compressed. Batches are encoded once per
 * (size, first or next, open or closed). Concurrency as [PingResponder].
 */
class CannedServer private constructor(
    server: ServerSocketChannel,
    selector: Selector,
    private val document: RawBsonDocument,
    private val corpusSize: Int,
) : PingResponder(server, selector) {
    private val batches = HashMap<Long, ByteArray>()
    private val oneDocument: ByteArray = batch(1, first = true, open = false)

    override fun hello(buf: ByteBuffer, docStart: Int): ByteArray {
        val request = rawAt(buf, docStart)
        val offered = (request["compression"] as? BsonArray)?.map { (it as? BsonString)?.value }
        return if (offered != null && "zstd" in offered) helloZstd else helloPlain
    }

    override fun command(c: Conn, name: String, buf: ByteBuffer, start: Int, length: Int): ByteArray? = when (name) {
        "find" -> find(c, body(buf, start, length))
        "getMore" -> getMore(c, body(buf, start, length))
        "insert" -> okN(statements(buf, start, length, "documents"))
        "update" -> statements(buf, start, length, "updates").let { n -> bytes(BsonDocument("n", BsonInt32(n)).append("nModified", BsonInt32(n)).append("ok", BsonInt32(1))) }
        "delete" -> okN(statements(buf, start, length, "deletes"))
        "bulkWrite" -> bulkWrite(buf, start, length)
        "killCursors" -> {
            c.cursorRemaining = 0
            okReply
        }
        "create", "drop", "dropDatabase", "createIndexes" -> okReply
        else -> null
    }

    private fun find(c: Conn, cmd: RawBsonDocument): ByteArray {
        val filter = cmd["filter"] as? BsonDocument
        if (filter != null && filter.containsKey("_id")) return oneDocument
        val size = (cmd["batchSize"]?.asNumber()?.intValue() ?: DEFAULT_FIRST_BATCH).coerceIn(0, corpusSize)
        c.cursorRemaining = corpusSize - size
        return batch(size, first = true, open = c.cursorRemaining > 0)
    }

    private fun getMore(c: Conn, cmd: RawBsonDocument): ByteArray {
        val fit = (MAX_BATCH_BYTES / document.byteBuffer.remaining()).coerceAtLeast(1)
        val asked = cmd["batchSize"]?.asNumber()?.intValue()?.takeIf { it > 0 } ?: fit
        val size = minOf(asked, fit, c.cursorRemaining)
        c.cursorRemaining -= size
        return batch(size, first = false, open = c.cursorRemaining > 0)
    }

    /** `{cursor: {firstBatch|nextBatch: [size × document], id, ns}, ok: 1}`, encoded once per shape. */
    private fun batch(size: Int, first: Boolean, open: Boolean): ByteArray {
        val key = size.toLong() * 4 + (if (first) 2 else 0) + (if (open) 1 else 0)
        return batches.getOrPut(key) {
            val docs = BsonArray(List(size) { document })
            bytes(
                BsonDocument("cursor", BsonDocument(if (first) "firstBatch" else "nextBatch", docs)
                    .append("id", BsonInt64(if (open) CURSOR_ID else 0))
                    .append("ns", BsonString("perftest.corpus")))
                    .append("ok", BsonInt32(1)),
            )
        }
    }

    /** How many statements a write command carries in [field]: its document sequence, else its body's array. */
    private fun statements(buf: ByteBuffer, start: Int, length: Int, field: String): Int {
        var n = 0
        forEachStatement(buf, start, length, field) { n++ }
        return n
    }

    /**
     * Calls [each] with the first field name of every document of the OP_MSG's [field] (a `bulkWrite` op's
     * `insert`, `update` or `delete`): its document sequence (payload type 1), else the array [field] of its body.
     */
    private fun forEachStatement(buf: ByteBuffer, start: Int, length: Int, field: String, each: (String) -> Unit) {
        val flags = buf.getInt(start + 16)
        val end = start + length - (if (flags and 0x1 != 0) 4 else 0)
        var p = start + 20
        var bodyAt = -1
        var found = false
        while (p < end) {
            val kind = buf.get(p)
            if (kind == 0.toByte()) {
                bodyAt = p + 1
                p = bodyAt + buf.getInt(bodyAt)
            } else {
                val size = buf.getInt(p + 1)
                val (id, first) = cString(buf, p + 5) // the sequence's identifier
                if (id == field) {
                    found = true
                    var q = first
                    while (q < p + 1 + size) {
                        each(cString(buf, q + 5).first) // int32 length, the first element's type byte, its name
                        q += buf.getInt(q)
                    }
                }
                p += 1 + size
            }
        }
        if (found || bodyAt < 0) return
        val array = rawAt(buf, bodyAt)[field] as? BsonArray ?: return
        for (v in array) each(v.asDocument().firstKey)
    }

    /** The `bulkWrite` reply: counts of the `ops` by kind, no errors, an exhausted cursor with an empty first batch. */
    private fun bulkWrite(buf: ByteBuffer, start: Int, length: Int): ByteArray {
        var inserted = 0
        var updated = 0
        var deleted = 0
        forEachStatement(buf, start, length, "ops") { kind ->
            when (kind) {
                "insert" -> inserted++
                "update" -> updated++
                "delete" -> deleted++
                else -> throw ProtocolError("a bulkWrite op named '$kind'")
            }
        }
        return bytes(
            BsonDocument("ok", BsonInt32(1))
                .append("cursor", BsonDocument("id", BsonInt64(0)).append("firstBatch", BsonArray()).append("ns", BsonString("admin.\$cmd.bulkWrite")))
                .append("nErrors", BsonInt32(0))
                .append("nInserted", BsonInt32(inserted))
                .append("nUpserted", BsonInt32(0))
                .append("nMatched", BsonInt32(updated))
                .append("nModified", BsonInt32(updated))
                .append("nDeleted", BsonInt32(deleted)),
        )
    }

    /** The C string at [at] of [buf] and the offset after its terminating 0. */
    private fun cString(buf: ByteBuffer, at: Int): Pair<String, Int> {
        var q = at
        while (buf.get(q) != 0.toByte()) q++
        val b = ByteArray(q - at)
        buf.get(at, b)
        return String(b, Charsets.UTF_8) to q + 1
    }

    override fun compressed(c: Conn, buf: ByteBuffer, start: Int, length: Int, opCode: Int): Boolean {
        if (opCode != OP_COMPRESSED) return false
        val original = buf.getInt(start + 16)
        val size = buf.getInt(start + 20)
        val id = buf.get(start + 24).toInt()
        if (id != ZSTD) throw ProtocolError("compressor $id is not served here")
        val compressed = ByteArray(length - 25)
        buf.get(start + 25, compressed)
        val inner = ByteBuffer.allocate(16 + size).order(ByteOrder.LITTLE_ENDIAN)
        inner.putInt(16 + size).putInt(buf.getInt(start + 4)).putInt(buf.getInt(start + 8)).putInt(original)
        inner.put(Zstd.decompress(compressed, size))
        c.replyCompressor = id
        try {
            handle(c, inner, 0, 16 + size)
        } finally {
            c.replyCompressor = 0
        }
        return true
    }

    override fun compress(compressorId: Int, opCode: Int, body: ByteArray): ByteArray {
        val z = Zstd.compress(body)
        return ByteBuffer.allocate(9 + z.size).order(ByteOrder.LITTLE_ENDIAN)
            .putInt(opCode).putInt(body.size).put(compressorId.toByte()).put(z).array()
    }

    private fun body(buf: ByteBuffer, start: Int, length: Int): RawBsonDocument {
        val flags = buf.getInt(start + 16)
        val end = start + length - (if (flags and 0x1 != 0) 4 else 0)
        var p = start + 20
        while (p < end) {
            if (buf.get(p) == 0.toByte()) return rawAt(buf, p + 1)
            p += 1 + buf.getInt(p + 1)
        }
        throw ProtocolError("an OP_MSG without a body")
    }

    private fun rawAt(buf: ByteBuffer, at: Int): RawBsonDocument {
        val bytes = ByteArray(buf.getInt(at))
        buf.get(at, bytes)
        return RawBsonDocument(bytes)
    }

    private fun okN(n: Int): ByteArray = bytes(BsonDocument("n", BsonInt32(n)).append("ok", BsonInt32(1)))

    companion object {
        const val CURSOR_ID = 4242L
        private const val DEFAULT_FIRST_BATCH = 101
        private const val MAX_BATCH_BYTES = 16 * 1024 * 1024 - 16 * 1024
        private const val ZSTD = 3
        /** The canned server's hello: the responder's, as a MongoDB 8.0 (wire version 25, client `bulkWrite`). */
        private fun cannedHello(): BsonDocument = helloDocument().append("maxWireVersion", BsonInt32(WIRE_VERSION_8_0))
        private const val WIRE_VERSION_8_0 = 25
        private val helloPlain: ByteArray = bytes(cannedHello())
        private val helloZstd: ByteArray = bytes(cannedHello().append("compression", BsonArray(listOf(BsonString("zstd")))))

        /** Serves [corpusSize] copies of [document] on 127.0.0.1:[port] (0 = ephemeral). Start serving with [run]. */
        fun bind(document: BsonDocument, corpusSize: Int = 10_000, port: Int = 0): CannedServer {
            val (server, selector) = listen(port)
            return CannedServer(server, selector, RawBsonDocument(bytes(document)), corpusSize)
        }
    }
}
