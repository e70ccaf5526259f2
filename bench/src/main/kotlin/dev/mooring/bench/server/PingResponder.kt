package dev.mooring.bench.server

import org.bson.BsonBoolean
import org.bson.BsonDateTime
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonInt64
import org.bson.BsonString
import org.bson.RawBsonDocument
import org.bson.codecs.BsonDocumentCodec
import java.net.InetSocketAddress
import java.nio.ByteBuffer
import java.nio.ByteOrder
import java.nio.channels.SelectionKey
import java.nio.channels.Selector
import java.nio.channels.ServerSocketChannel
import java.nio.channels.SocketChannel

/**
 * A minimal MongoDB responder for the benchmarks: one selector thread, no coroutines, replies
 * pre-encoded once at start. It answers legacy hello (OP_QUERY `isMaster`, answered with
 * OP_REPLY), `hello`/`isMaster` and `ping` over OP_MSG, `endSessions` with `ok: 1`, and any other
 * command with a `CommandNotFound` error, so that the client's own cost dominates a ping.
 * OP_MSG requests with moreToCome get no reply. Per request it only copies the pre-encoded bytes
 * and patches requestID/responseTo.
 *
 * [CannedServer] extends it with the workload tasks' commands ([command]) and compression
 * ([compressed]); the ping path is the same for both.
 *
 * Concurrency: [run] is the only thread touching sockets; [close] may be called from any thread.
 */
open class PingResponder protected constructor(private val server: ServerSocketChannel, private val selector: Selector) : AutoCloseable {
    val port: Int = (server.localAddress as InetSocketAddress).port
    @Volatile private var closed = false
    private var nextRequestId = 1

    /** One client connection: its buffers and what a subclass keeps per connection (an open cursor, the compressor). */
    protected class Conn(val channel: SocketChannel) {
        var inBuf: ByteBuffer = ByteBuffer.allocate(16 * 1024).order(ByteOrder.LITTLE_ENDIAN)
        var outBuf: ByteBuffer = ByteBuffer.allocate(64 * 1024).order(ByteOrder.LITTLE_ENDIAN).also { it.flip() }

        /** Documents left in this connection's open cursor ([CannedServer]). */
        var cursorRemaining: Int = 0

        /** The compressor id replies are wrapped with (OP_COMPRESSED), 0 for none: set while a compressed request is answered. */
        var replyCompressor: Int = 0
    }

    /** Serves until [close]. Call on a dedicated thread. */
    fun run() {
        try {
            while (!closed) {
                selector.select()
                val it = selector.selectedKeys().iterator()
                while (it.hasNext()) {
                    val key = it.next()
                    it.remove()
                    try {
                        when {
                            !key.isValid -> Unit
                            key.isAcceptable -> accept()
                            else -> {
                                val conn = key.attachment() as Conn
                                if (key.isWritable) flush(key, conn)
                                if (key.isValid && key.isReadable) read(key, conn)
                            }
                        }
                    } catch (e: java.io.IOException) {
                        drop(key)
                    } catch (e: ProtocolError) {
                        System.err.println("responder: dropping a connection: ${e.message}")
                        drop(key)
                    }
                }
            }
        } catch (e: java.nio.channels.ClosedSelectorException) {
            // closed
        }
    }

    private fun accept() {
        val ch = server.accept() ?: return
        ch.configureBlocking(false)
        ch.socket().tcpNoDelay = true
        ch.register(selector, SelectionKey.OP_READ, Conn(ch))
    }

    private fun drop(key: SelectionKey) {
        key.cancel()
        try { key.channel().close() } catch (_: java.io.IOException) { }
    }

    private fun read(key: SelectionKey, c: Conn) {
        val n = c.channel.read(c.inBuf)
        if (n < 0) { drop(key); return }
        val buf = c.inBuf
        buf.flip()
        while (buf.remaining() >= 16) {
            val start = buf.position()
            val length = buf.getInt(start)
            if (length < 16 || length > MAX_MESSAGE) throw ProtocolError("bad message length $length")
            if (buf.remaining() < length) {
                if (buf.capacity() < length) {
                    val bigger = ByteBuffer.allocate(maxOf(length, buf.capacity() * 2)).order(ByteOrder.LITTLE_ENDIAN)
                    bigger.put(buf) // the partial message, at the start; bigger stays in write mode
                    c.inBuf = bigger
                    if (c.outBuf.hasRemaining()) flush(key, c)
                    return
                }
                break
            }
            handle(c, buf, start, length)
            buf.position(start + length)
        }
        buf.compact()
        if (c.outBuf.hasRemaining()) flush(key, c)
    }

    /** Answers the message at [start] of [length] bytes in [buf]. */
    protected fun handle(c: Conn, buf: ByteBuffer, start: Int, length: Int) {
        val requestId = buf.getInt(start + 4)
        val opCode = buf.getInt(start + 12)
        when (opCode) {
            OP_QUERY -> {
                // flags, then fullCollectionName (cstring), skip, return, query document
                var p = start + 20
                while (buf.get(p) != 0.toByte()) p++
                val doc = p + 1 + 8
                val reply = if (isHello(commandName(buf, doc))) hello(buf, doc) else notSupportedReply
                appendReply(c, OP_REPLY, requestId, opReplyPrefix, reply)
            }
            OP_MSG -> {
                val flags = buf.getInt(start + 16)
                val moreToCome = flags and 0x2 != 0
                var p = start + 20
                val end = start + length - (if (flags and 0x1 != 0) 4 else 0)
                var name = ""
                var body = -1
                while (p < end) {
                    val kind = buf.get(p)
                    if (kind == 0.toByte()) {
                        name = commandName(buf, p + 1)
                        body = p + 1
                        break
                    }
                    p += 1 + buf.getInt(p + 1) // kind 1: int32 size (includes itself)
                }
                if (moreToCome) return
                val reply = when {
                    isHello(name) -> hello(buf, body)
                    name == "ping" || name == "endSessions" -> okReply
                    else -> command(c, name, buf, start, length) ?: notSupportedReply
                }
                appendReply(c, OP_MSG, requestId, opMsgPrefix, reply)
            }
            else -> if (!compressed(c, buf, start, length, opCode)) throw ProtocolError("unsupported opCode $opCode")
        }
    }

    /** The reply to hello/isMaster whose command document starts at [docStart] of [buf]. */
    protected open fun hello(buf: ByteBuffer, docStart: Int): ByteArray = helloReply

    /**
     * The reply document to the OP_MSG command [name] (the message at [start] of [length] bytes in
     * [buf]), other than hello, ping and endSessions; null: `CommandNotFound`.
     */
    protected open fun command(c: Conn, name: String, buf: ByteBuffer, start: Int, length: Int): ByteArray? = null

    /** Handles a message of [opCode] the responder does not know (OP_COMPRESSED in [CannedServer]); false: a protocol error. */
    protected open fun compressed(c: Conn, buf: ByteBuffer, start: Int, length: Int, opCode: Int): Boolean = false

    /** [doc] wrapped for the wire when [Conn.replyCompressor] is set (OP_COMPRESSED in [CannedServer]); never called otherwise. */
    protected open fun compress(compressorId: Int, opCode: Int, body: ByteArray): ByteArray = throw ProtocolError("no compression here")

    protected fun commandName(buf: ByteBuffer, docStart: Int): String {
        val first = docStart + 4
        if (buf.get(first) == 0.toByte()) return ""
        var p = first + 1
        val sb = StringBuilder()
        while (true) {
            val b = buf.get(p)
            if (b == 0.toByte()) break
            sb.append((b.toInt() and 0xff).toChar())
            p++
        }
        return sb.toString()
    }

    private fun appendReply(c: Conn, opCode: Int, responseTo: Int, prefix: ByteArray, doc: ByteArray) {
        if (c.replyCompressor != 0) {
            val compressed = compress(c.replyCompressor, opCode, prefix + doc)
            return append(c, OP_COMPRESSED, responseTo, compressed, EMPTY)
        }
        append(c, opCode, responseTo, prefix, doc)
    }

    private fun append(c: Conn, opCode: Int, responseTo: Int, prefix: ByteArray, doc: ByteArray) {
        var out = c.outBuf
        val total = 16 + prefix.size + doc.size
        out.compact()
        if (out.remaining() < total) {
            // a large reply (a workload's batch): a bigger buffer, kept for the connection
            if (out.position() > 0 && out.capacity() >= MAX_OUT) throw ProtocolError("client is not reading its replies")
            val bigger = ByteBuffer.allocate(out.position() + total).order(ByteOrder.LITTLE_ENDIAN)
            out.flip()
            bigger.put(out)
            out = bigger
            c.outBuf = bigger
        }
        out.putInt(total).putInt(nextRequestId++).putInt(responseTo).putInt(opCode)
        out.put(prefix).put(doc)
        out.flip()
    }

    private fun flush(key: SelectionKey, c: Conn) {
        val out = c.outBuf
        if (out.remaining() <= WRITE_SLICE) {
            c.channel.write(out)
        } else {
            // A large reply in slices: NIO copies a heap buffer's whole remainder into a temporary
            // direct buffer per write, however little the socket takes (quadratic for 16 MB batches).
            val end = out.limit()
            while (out.hasRemaining()) {
                out.limit(minOf(end, out.position() + WRITE_SLICE))
                val n = c.channel.write(out)
                out.limit(end)
                if (n == 0) break
            }
        }
        key.interestOps(if (out.hasRemaining()) SelectionKey.OP_READ or SelectionKey.OP_WRITE else SelectionKey.OP_READ)
    }

    override fun close() {
        closed = true
        try { server.close() } catch (_: java.io.IOException) { }
        try { selector.close() } catch (_: java.io.IOException) { }
    }

    protected class ProtocolError(message: String) : Exception(message)

    companion object {
        private const val OP_REPLY = 1
        private const val OP_QUERY = 2004
        const val OP_MSG = 2013
        const val OP_COMPRESSED = 2012
        private const val MAX_MESSAGE = 48_000_000
        private const val MAX_OUT = 64 * 1024 * 1024
        private const val WRITE_SLICE = 256 * 1024
        private val EMPTY = ByteArray(0)

        private fun isHello(name: String) = name == "hello" || name == "isMaster" || name == "ismaster"

        /** [doc]'s BSON bytes. */
        fun bytes(doc: BsonDocument): ByteArray {
            val raw = RawBsonDocument(doc, BsonDocumentCodec())
            val bb = raw.byteBuffer
            val out = ByteArray(bb.remaining())
            bb.get(out)
            return out
        }

        /** The hello reply's fields (a standalone, wire version 21). */
        fun helloDocument(): BsonDocument =
            BsonDocument()
                .append("helloOk", BsonBoolean.TRUE)
                .append("ismaster", BsonBoolean.TRUE)
                .append("isWritablePrimary", BsonBoolean.TRUE)
                .append("maxBsonObjectSize", BsonInt32(16 * 1024 * 1024))
                .append("maxMessageSizeBytes", BsonInt32(48_000_000))
                .append("maxWriteBatchSize", BsonInt32(100_000))
                .append("localTime", BsonDateTime(System.currentTimeMillis()))
                .append("logicalSessionTimeoutMinutes", BsonInt32(30))
                .append("connectionId", BsonInt64(1))
                .append("minWireVersion", BsonInt32(0))
                .append("maxWireVersion", BsonInt32(21))
                .append("readOnly", BsonBoolean.FALSE)
                .append("ok", BsonInt32(1))

        private val helloReply: ByteArray = bytes(helloDocument())
        val okReply: ByteArray = bytes(BsonDocument("ok", BsonInt32(1)))
        private val notSupportedReply: ByteArray = bytes(
            BsonDocument("ok", BsonInt32(0))
                .append("errmsg", BsonString("the benchmark responder only answers hello, isMaster, ping and endSessions"))
                .append("code", BsonInt32(59))
                .append("codeName", BsonString("CommandNotFound")),
        )
        // OP_MSG: flagBits 0, section kind 0. OP_REPLY: responseFlags 0 (AwaitCapable 8), cursorId 0, startingFrom 0, numberReturned 1.
        private val opMsgPrefix = byteArrayOf(0, 0, 0, 0, 0)
        private val opReplyPrefix: ByteArray = ByteBuffer.allocate(20).order(ByteOrder.LITTLE_ENDIAN)
            .putInt(8).putLong(0).putInt(0).putInt(1).array()

        /** Binds 127.0.0.1 on [port] (0 = ephemeral). Start serving with [run]. */
        fun bind(port: Int = 0): PingResponder = listen(port).let { (server, selector) -> PingResponder(server, selector) }

        /** A server socket bound to 127.0.0.1 on [port] (0 = ephemeral), non-blocking, registered for accepts on a new selector. */
        fun listen(port: Int): Pair<ServerSocketChannel, Selector> {
            val selector = Selector.open()
            val server = ServerSocketChannel.open()
            server.bind(InetSocketAddress("127.0.0.1", port), 1024)
            server.configureBlocking(false)
            server.register(selector, SelectionKey.OP_ACCEPT)
            return server to selector
        }
    }
}
