package dev.mooring.bench.server

import com.github.luben.zstd.Zstd
import dev.mooring.bench.workload.WorkloadTask
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
 * - `create`, `drop`, `dropDatabase`, `killCursors`, `createIndexes`: `ok: 1`;
 * - `find` on `perftest.corpus_export` (the LDJSON export's collection, [exportDocuments] given), whatever its
 *   filter: a cursor over all of [exportDocuments] (the first LDJSON file's documents), its first batch the
 *   command's `batchSize` (101 by default), each `getMore` its `batchSize` or as many as fit in 16 MiB. Each such
 *   find opens a cursor of its own id (its position kept by id, so a `getMore` may come on any connection); the
 *   batches are encoded once per (offset, size, first or next, open or closed) and only the cursor id is patched in.
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
    private val exportDocuments: List<RawBsonDocument>,
) : PingResponder(server, selector) {
    /** Open export cursors: id → the offset of the next document (selector thread only). */
    private val exportCursors = HashMap<Long, Int>()
    private var nextExportCursor = EXPORT_CURSOR_BASE
    private val exportBatches = HashMap<List<Int>, Pair<ByteArray, Int>>()
    private val batches = HashMap<Long, ByteArray>()
    private val oneDocument: ByteArray = batch(1, first = true, open = false)

    override fun hello(buf: ByteBuffer, docStart: Int): ByteArray {
        val request = rawAt(buf, docStart)
        val offered = (request["compression"] as? BsonArray)?.map { (it as? BsonString)?.value }
        return if (offered != null && "zstd" in offered) helloZstd else helloPlain
    }

    override fun command(c: Conn, name: String, buf: ByteBuffer, start: Int, length: Int): ByteArray? = when (name) {
        "find" -> find(c, body(buf, start, length))
        "getMore" -> body(buf, start, length).let { cmd ->
            val id = cmd["getMore"]?.asNumber()?.longValue() ?: 0
            if (id >= EXPORT_CURSOR_BASE) exportGetMore(id, cmd) else getMore(c, cmd)
        }
        "insert" -> okN(statements(buf, start, length, "documents"))
        "update" -> statements(buf, start, length, "updates").let { n -> bytes(BsonDocument("n", BsonInt32(n)).append("nModified", BsonInt32(n)).append("ok", BsonInt32(1))) }
        "delete" -> okN(statements(buf, start, length, "deletes"))
        "bulkWrite" -> bulkWrite(buf, start, length)
        "killCursors" -> {
            c.cursorRemaining = 0
            (body(buf, start, length)["cursors"] as? BsonArray)?.forEach { exportCursors.remove(it.asNumber().longValue()) }
            okReply
        }
        "create", "drop", "dropDatabase", "createIndexes" -> okReply
        else -> null
    }

    private fun find(c: Conn, cmd: RawBsonDocument): ByteArray {
        if (exportDocuments.isNotEmpty() && (cmd["find"] as? BsonString)?.value == WorkloadTask.EXPORT_COLLECTION) return exportFind(cmd)
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

    /** The export find: a new cursor over [exportDocuments], its first batch. */
    private fun exportFind(cmd: RawBsonDocument): ByteArray {
        val id = nextExportCursor++
        val size = (cmd["batchSize"]?.asNumber()?.intValue() ?: DEFAULT_FIRST_BATCH).coerceIn(0, exportDocuments.size)
        return exportBatch(id, 0, size, first = true)
    }

    private fun exportGetMore(id: Long, cmd: RawBsonDocument): ByteArray {
        val offset = exportCursors[id] ?: return bytes(
            BsonDocument("ok", BsonInt32(0)).append("errmsg", BsonString("cursor id $id not found")).append("code", BsonInt32(CURSOR_NOT_FOUND)),
        )
        var fit = 0
        var bytes = 0
        while (offset + fit < exportDocuments.size) {
            bytes += exportDocuments[offset + fit].byteBuffer.remaining()
            if (fit > 0 && bytes > MAX_BATCH_BYTES) break
            fit++
        }
        val asked = cmd["batchSize"]?.asNumber()?.intValue()?.takeIf { it > 0 } ?: fit
        return exportBatch(id, offset, minOf(asked, fit), first = false)
    }

    /**
     * The export cursor [id]'s batch of [size] documents from [offset]: encoded once per shape with a placeholder id,
     * copied and the id written in; the cursor is forgotten when the batch ends it.
     */
    private fun exportBatch(id: Long, offset: Int, size: Int, first: Boolean): ByteArray {
        val open = offset + size < exportDocuments.size
        if (open) exportCursors[id] = offset + size else exportCursors.remove(id)
        val (template, idAt) = exportBatches.getOrPut(listOf(offset, size, if (first) 1 else 0, if (open) 1 else 0)) {
            val encoded = bytes(
                BsonDocument("cursor", BsonDocument(if (first) "firstBatch" else "nextBatch", BsonArray(exportDocuments.subList(offset, offset + size)))
                    .append("id", BsonInt64(if (open) ID_PLACEHOLDER else 0))
                    .append("ns", BsonString("perftest.$WorkloadTask.EXPORT_COLLECTION")))
                    .append("ok", BsonInt32(1)),
            )
            encoded to (if (open) indexOfLong(encoded, ID_PLACEHOLDER) else -1)
        }
        if (idAt < 0) return template
        val reply = template.copyOf()
        ByteBuffer.wrap(reply).order(ByteOrder.LITTLE_ENDIAN).putLong(idAt, id)
        return reply
    }

    private fun indexOfLong(bytes: ByteArray, value: Long): Int {
        val b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN)
        for (i in bytes.size - 8 downTo 0) if (b.getLong(i) == value) return i
        throw IllegalStateException("no cursor id placeholder in the encoded batch")
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
        private const val EXPORT_CURSOR_BASE = 1L shl 40
        private const val ID_PLACEHOLDER = 0x5EED_CAFE_F00D_BEEFL
        private const val CURSOR_NOT_FOUND = 43
        private const val DEFAULT_FIRST_BATCH = 101
        private const val MAX_BATCH_BYTES = 16 * 1024 * 1024 - 16 * 1024
        private const val ZSTD = 3
        /** The canned server's hello: the responder's, as a MongoDB 8.0 (wire version 25, client `bulkWrite`). */
        private fun cannedHello(): BsonDocument = helloDocument().append("maxWireVersion", BsonInt32(WIRE_VERSION_8_0))
        private const val WIRE_VERSION_8_0 = 25
        private val helloPlain: ByteArray = bytes(cannedHello())
        private val helloZstd: ByteArray = bytes(cannedHello().append("compression", BsonArray(listOf(BsonString("zstd")))))

        /**
         * Serves [corpusSize] copies of [document] on 127.0.0.1:[port] (0 = ephemeral), and [exportDocuments] to a find
         * on `perftest.corpus_export`. Start serving with [run].
         */
        fun bind(document: BsonDocument, corpusSize: Int = 10_000, port: Int = 0, exportDocuments: List<BsonDocument> = emptyList()): CannedServer {
            val (server, selector) = listen(port)
            return CannedServer(server, selector, RawBsonDocument(bytes(document)), corpusSize, exportDocuments.map { RawBsonDocument(bytes(it)) })
        }
    }
}
