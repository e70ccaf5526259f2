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
        return if (offered != null && "zstd" in offered) helloZstd else super.hello(buf, docStart)
    }

    override fun command(c: Conn, name: String, buf: ByteBuffer, start: Int, length: Int): ByteArray? = when (name) {
        "find" -> find(c, body(buf, start, length))
        "getMore" -> getMore(c, body(buf, start, length))
        "insert" -> okN(inserted(buf, start, length))
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

    /** Documents an insert carries: its `documents` document sequence, else its body's `documents` array. */
    private fun inserted(buf: ByteBuffer, start: Int, length: Int): Int {
        val flags = buf.getInt(start + 16)
        val end = start + length - (if (flags and 0x1 != 0) 4 else 0)
        var p = start + 20
        var n = 0
        var bodyAt = -1
        while (p < end) {
            val kind = buf.get(p)
            if (kind == 0.toByte()) {
                bodyAt = p + 1
                p = bodyAt + buf.getInt(bodyAt)
            } else {
                val size = buf.getInt(p + 1)
                var q = p + 5
                while (buf.get(q) != 0.toByte()) q++ // the sequence's identifier
                q++
                while (q < p + 1 + size) {
                    n++
                    q += buf.getInt(q)
                }
                p += 1 + size
            }
        }
        if (n == 0 && bodyAt >= 0) n = (rawAt(buf, bodyAt)["documents"] as? BsonArray)?.size ?: 0
        return n
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
        private val helloZstd: ByteArray = bytes(helloDocument().append("compression", BsonArray(listOf(BsonString("zstd")))))

        /** Serves [corpusSize] copies of [document] on 127.0.0.1:[port] (0 = ephemeral). Start serving with [run]. */
        fun bind(document: BsonDocument, corpusSize: Int = 10_000, port: Int = 0): CannedServer {
            val (server, selector) = listen(port)
            return CannedServer(server, selector, RawBsonDocument(bytes(document)), corpusSize)
        }
    }
}
