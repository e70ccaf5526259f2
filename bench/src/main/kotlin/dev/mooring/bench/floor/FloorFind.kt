package dev.mooring.bench.floor

import com.github.luben.zstd.Zstd
import dev.mooring.bench.official.SyncWorkload
import dev.mooring.bench.workload.TaskOps
import dev.mooring.bench.workload.WorkloadTask
import org.bson.BsonArray
import org.bson.BsonBinaryWriter
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonInt64
import org.bson.BsonString
import org.bson.RawBsonDocument
import org.bson.codecs.BsonDocumentCodec
import org.bson.codecs.EncoderContext
import org.bson.io.BasicOutputBuffer
import java.io.EOFException
import java.nio.ByteBuffer
import java.nio.ByteOrder
import java.nio.channels.SocketChannel

/**
 * The floor of a decoding task (find one by `_id`, find many): one blocking socket, no
 * handshake, no pool, no session; the requests encoded before the timed phase (the getMores as
 * the cursor id arrives), each reply read whole and its batch iterated as `RawBsonDocument`s (one
 * view per document, nothing decoded into a tree). With [zstd] the requests go as OP_COMPRESSED
 * and compressed replies are decompressed, as a client with `compressors=zstd` does. The
 * collection is filled in setup through the official sync driver (setup is not measured).
 */
internal class FloorFind(private val task: WorkloadTask, private val target: String, private val zstd: Boolean, private val operations: Int = task.operations) : TaskOps {
    private lateinit var channel: SocketChannel
    private var findRequests: List<ByteBuffer> = emptyList()
    private val header = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN)
    private var body = ByteBuffer.allocate(64 * 1024).order(ByteOrder.LITTLE_ENDIAN)
    private var requestId = 1

    override fun setup() {
        SyncWorkload(task, target, operations).use { it.setup() }
        channel = SocketChannel.open(FloorDriver.serverAddress(target)).apply { socket().tcpNoDelay = true }
        findRequests = when (task) {
            WorkloadTask.FIND_ONE_BY_ID -> (1..operations).map { id ->
                message(BsonDocument("find", BsonString(task.collection)).append("filter", BsonDocument("_id", BsonInt32(id)))
                    .append("limit", BsonInt32(1)).append("singleBatch", org.bson.BsonBoolean.TRUE).append("\$db", BsonString(task.database)))
            }
            WorkloadTask.FIND_MANY -> listOf(message(BsonDocument("find", BsonString(task.collection)).append("filter", BsonDocument()).append("\$db", BsonString(task.database))))
            else -> throw IllegalArgumentException("the floor has no ${task.scenario.key}")
        }
    }

    override fun doTask() {
        var n = 0
        if (task == WorkloadTask.FIND_ONE_BY_ID) {
            for (request in findRequests) {
                n += documents(roundTrip(request), "firstBatch").first
            }
        } else {
            var (count, cursorId) = documents(roundTrip(findRequests[0]), "firstBatch")
            n += count
            while (cursorId != 0L) {
                val next = documents(
                    roundTrip(message(BsonDocument("getMore", BsonInt64(cursorId)).append("collection", BsonString(task.collection)).append("\$db", BsonString(task.database)))),
                    "nextBatch",
                )
                n += next.first
                cursorId = next.second
            }
        }
        check(n == operations) { "the floor read $n documents, expected $operations" }
    }

    /** The batch's documents, each touched as a `RawBsonDocument` view, and the cursor id. */
    private fun documents(reply: RawBsonDocument, batch: String): Pair<Int, Long> {
        val cursor = reply["cursor"] as? BsonDocument ?: throw IllegalStateException("not a cursor reply: $reply")
        var n = 0
        for (d in cursor[batch] as BsonArray) {
            if ((d as RawBsonDocument).size > 0) n++ // size walks every field of the document
        }
        return n to cursor.getInt64("id").value
    }

    private fun roundTrip(request: ByteBuffer): RawBsonDocument {
        request.clear()
        while (request.hasRemaining()) channel.write(request)
        header.clear()
        readFully(header)
        val length = header.getInt(0)
        check(length in 16..48 * 1024 * 1024) { "reply length $length is not a MongoDB message" }
        if (body.capacity() < length - 16) body = ByteBuffer.allocate(length - 16).order(ByteOrder.LITTLE_ENDIAN)
        body.clear().limit(length - 16)
        readFully(body)
        val opCode = header.getInt(12)
        val msg: ByteArray
        val at: Int
        if (opCode == OP_COMPRESSED) {
            val size = body.getInt(4)
            val compressed = ByteArray(length - 16 - 9)
            body.get(9, compressed)
            msg = Zstd.decompress(compressed, size)
            at = 5 // flagBits, kind 0
        } else {
            msg = body.array()
            at = 5
        }
        val docLength = ByteBuffer.wrap(msg, at, 4).order(ByteOrder.LITTLE_ENDIAN).getInt()
        return RawBsonDocument(msg, at, docLength)
    }

    private fun readFully(buf: ByteBuffer) {
        while (buf.hasRemaining()) if (channel.read(buf) < 0) throw EOFException("the server closed the connection")
    }

    /** [command] as an OP_MSG (kind 0 body), wrapped in OP_COMPRESSED with [zstd]. */
    private fun message(command: BsonDocument): ByteBuffer {
        val out = BasicOutputBuffer()
        BsonBinaryWriter(out).use { w -> BsonDocumentCodec().encode(w, command, EncoderContext.builder().build()) }
        val doc = out.toByteArray()
        val msgBody = ByteBuffer.allocate(5 + doc.size).order(ByteOrder.LITTLE_ENDIAN).putInt(0).put(0).put(doc).array()
        val id = requestId++
        if (!zstd) {
            return ByteBuffer.allocate(16 + msgBody.size).order(ByteOrder.LITTLE_ENDIAN)
                .putInt(16 + msgBody.size).putInt(id).putInt(0).putInt(OP_MSG).put(msgBody).flip()
        }
        val z = Zstd.compress(msgBody)
        val length = 16 + 9 + z.size
        return ByteBuffer.allocate(length).order(ByteOrder.LITTLE_ENDIAN)
            .putInt(length).putInt(id).putInt(0).putInt(OP_COMPRESSED)
            .putInt(OP_MSG).putInt(msgBody.size).put(ZSTD).put(z).flip()
    }

    override fun close() {
        if (::channel.isInitialized) runCatching { channel.close() }
    }

    private companion object {
        const val OP_MSG = 2013
        const val OP_COMPRESSED = 2012
        const val ZSTD: Byte = 3
    }
}
