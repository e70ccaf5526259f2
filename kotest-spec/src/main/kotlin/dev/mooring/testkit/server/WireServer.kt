package dev.mooring.testkit.server

import dev.mooring.cmap.internal.wire.MessageHeader
import dev.mooring.cmap.internal.wire.OpCode
import dev.mooring.cmap.internal.wire.OpMsg
import dev.mooring.cmap.internal.wire.OpMsgCodec
import dev.mooring.cmap.internal.wire.OpQuery
import dev.mooring.cmap.internal.wire.OpReply
import dev.mooring.cmap.internal.wire.RequestIds
import dev.mooring.events.ServerAddress
import io.ktor.network.selector.SelectorManager
import io.ktor.network.sockets.InetSocketAddress
import io.ktor.network.sockets.ServerSocket
import io.ktor.network.sockets.Socket
import io.ktor.network.sockets.UnixSocketAddress
import io.ktor.network.sockets.aSocket
import io.ktor.network.sockets.openReadChannel
import io.ktor.network.sockets.openWriteChannel
import io.ktor.utils.io.ByteWriteChannel
import io.ktor.utils.io.readFully
import io.ktor.utils.io.writeFully
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.cancel
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.collect
import kotlinx.coroutines.flow.transformWhile
import kotlinx.coroutines.launch
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.atomic.AtomicReference

/** A scriptable command handler: return a [Reply], or null to let the built-ins answer. */
typealias CommandHandler = suspend (ctx: RequestContext, database: String, command: BsonDocument) -> Reply?

/**
 * A scriptable MongoDB wire-protocol server on 127.0.0.1 and an ephemeral port, for tests.
 *
 * It speaks OP_QUERY (legacy hello only, answered with OP_REPLY) and OP_MSG (with checksums,
 * document sequences, moreToCome requests and exhaust replies). Each request goes through, in
 * order: the command counter, the `failCommand` fail point ([configureFailPoint], or the
 * `configureFailPoint` command), the [handler] (null = fall through), then the built-ins:
 * hello/isMaster (answered by [hello]), ping, buildInfo, endSessions, insert/find/delete/drop
 * ([collections]), configureFailPoint; anything else is `CommandNotFound` (59).
 *
 * Concurrency: one coroutine per connection in a scope the server owns; [handler], [hello] and
 * the fail point may be replaced at any time from any thread. [close] stops accepting, closes
 * every connection and cancels every coroutine; it is idempotent and does not block.
 */
class WireServer private constructor(
    private val selector: SelectorManager,
    private val serverSocket: ServerSocket,
) : AutoCloseable {
    private val scope = CoroutineScope(SupervisorJob() + Dispatchers.IO)
    private val sockets = ConcurrentHashMap.newKeySet<Socket>()
    private val connectionNumbers = AtomicInteger()
    private val closed = AtomicBoolean(false)
    private val failPoint = AtomicReference<FailCommandFailPoint?>(null)

    /** The TCP port the server listens on (0 for a Unix domain socket). */
    val port: Int = (serverSocket.localAddress as? InetSocketAddress)?.port ?: 0

    /** `127.0.0.1:port`, or the socket path. */
    val address: ServerAddress = (serverSocket.localAddress as? UnixSocketAddress)?.let { ServerAddress.unixSocket(it.path) }
        ?: ServerAddress("127.0.0.1", port)

    /** Connection and command counters. */
    val counters: WireServerCounters = WireServerCounters()

    /** The in-memory collections behind insert/find/delete. */
    val collections: InMemoryCollections = InMemoryCollections()

    /** Scripted handler consulted before the built-ins; null answers let the built-ins run. */
    @Volatile var handler: CommandHandler = { _, _, _ -> null }

    /** Produces the hello / legacy hello reply; replace to script topology changes. */
    @Volatile var hello: (RequestContext, BsonDocument) -> BsonDocument = DefaultHello::standalone

    /** The fail point in force, if any. */
    val activeFailPoint: FailCommandFailPoint? get() = failPoint.get()

    /**
     * Sets (or, with mode `off`, clears) the failCommand fail point without going through the
     * wire. [command] is the usual `{configureFailPoint: "failCommand", mode, data}` document.
     */
    fun configureFailPoint(command: BsonDocument) {
        failPoint.set(FailCommandFailPoint.parse(command))
    }

    /** Clears the fail point. */
    fun clearFailPoint() {
        failPoint.set(null)
    }

    private fun start() {
        scope.launch {
            while (true) {
                val socket = try {
                    serverSocket.accept()
                } catch (e: Exception) {
                    break
                }
                if (closed.get()) { socket.close(); break }
                val number = connectionNumbers.incrementAndGet()
                counters.opened()
                sockets.add(socket)
                scope.launch {
                    try {
                        serve(socket, number)
                    } catch (_: Throwable) {
                        // the client went away or sent garbage: drop the connection
                    } finally {
                        sockets.remove(socket)
                        socket.close()
                        counters.closed()
                    }
                }
            }
        }
    }

    private class Request(val viaOpQuery: Boolean, val requestId: Int, val exhaustAllowed: Boolean, val moreToCome: Boolean)

    private suspend fun serve(socket: Socket, number: Int) {
        val input = socket.openReadChannel()
        val output = socket.openWriteChannel(autoFlush = false)
        val remotePort = (socket.remoteAddress as? InetSocketAddress)?.port ?: 0
        var appName: String? = null
        while (true) {
            val headerBytes = ByteArray(MessageHeader.HEADER_LENGTH)
            input.readFully(headerBytes, 0, headerBytes.size)
            val header = MessageHeader.parse(headerBytes, 48_000_000)
            val body = ByteArray(header.bodyLength)
            input.readFully(body, 0, body.size)
            val (req, db, cmd) = when (header.opCode) {
                OpCode.OP_QUERY -> {
                    val q = OpQuery.decode(header, body)
                    Triple(Request(true, header.requestId, false, false), q.database, q.query)
                }
                OpCode.OP_MSG -> {
                    val m = OpMsgCodec.decode(header, headerBytes, body)
                    val c = m.bodyWithSequences()
                    val db = c["\$db"]?.takeIf { it.isString }?.asString()?.value ?: ""
                    Triple(Request(false, header.requestId, m.exhaustAllowed, m.moreToCome), db, c)
                }
                else -> return
            }
            val name = cmd.keys.firstOrNull() ?: ""
            counters.command(name)
            if (appName == null && isHello(name)) {
                appName = (cmd["client"] as? BsonDocument)?.let { (it["application"] as? BsonDocument)?.get("name") }
                    ?.takeIf { it.isString }?.asString()?.value
            }
            val ctx = RequestContext(this, number, remotePort, req.viaOpQuery, appName, req.requestId, req.exhaustAllowed, name)
            val keepOpen = coroutineScope {
                // a client that hangs up while its request is being handled ends the connection at once
                val watcher = launch {
                    if (!input.awaitContent(1)) throw java.io.IOException("client closed the connection")
                }
                try {
                    val reply = dispatch(ctx, db, cmd)
                    req.moreToCome || send(output, req, reply)
                } finally {
                    watcher.cancel()
                }
            }
            if (!keepOpen) return
        }
    }

    private suspend fun dispatch(ctx: RequestContext, db: String, cmd: BsonDocument): Reply {
        if (ctx.viaOpQuery && !isHello(ctx.commandName)) {
            return Reply.Document(error(352, "UnsupportedOpQueryCommand", "Unsupported OP_QUERY command: ${ctx.commandName}"))
        }
        if (ctx.commandName == "configureFailPoint") {
            return try {
                configureFailPoint(cmd)
                Reply.Document(ok())
            } catch (e: IllegalArgumentException) {
                Reply.Document(error(2, "BadValue", e.message ?: "bad fail point"))
            }
        }
        val fp = failPoint.get()
        if (fp != null && fp.fires(ctx.commandName, ctx.appName)) {
            fp.blockTimeMS?.let { delay(it) }
            if (fp.closeConnection) return Reply.CloseConnection
            if (fp.errorCode != null) return Reply.Document(fp.errorReply())
            val normal = answer(ctx, db, cmd)
            val wce = fp.writeConcernError
            return if (wce != null && normal is Reply.Document) {
                Reply.Document(normal.document.clone().append("writeConcernError", wce))
            } else {
                normal
            }
        }
        return answer(ctx, db, cmd)
    }

    private suspend fun answer(ctx: RequestContext, db: String, cmd: BsonDocument): Reply =
        handler(ctx, db, cmd) ?: Reply.Document(builtIn(ctx, db, cmd))

    private fun builtIn(ctx: RequestContext, db: String, cmd: BsonDocument): BsonDocument = when (ctx.commandName) {
        "hello", "isMaster", "ismaster" -> hello(ctx, cmd)
        "ping", "endSessions" -> ok()
        "buildInfo", "buildinfo" -> BsonDocument("version", BsonString("7.0.0"))
            .append("versionArray", org.bson.BsonArray(listOf(7, 0, 0, 0).map { BsonInt32(it) }))
            .append("ok", BsonInt32(1))
        "insert" -> collections.insert(db, cmd)
        "find" -> collections.find(db, cmd)
        "delete" -> collections.delete(db, cmd)
        "drop" -> collections.drop(db, cmd)
        else -> error(59, "CommandNotFound", "no such command: '${ctx.commandName}'")
    }

    /** Writes [reply]; false when the connection must be closed. */
    private suspend fun send(out: ByteWriteChannel, req: Request, reply: Reply): Boolean {
        when (reply) {
            is Reply.Document -> write(out, encode(req, req.requestId, reply.document, moreToCome = false))
            Reply.CloseConnection -> return false
            is Reply.Raw -> {
                write(out, reply.bytes(req.requestId))
                if (reply.closeAfter) return false
            }
            is Reply.Delayed -> {
                delay(reply.millis)
                return send(out, req, reply.then)
            }
            is Reply.Exhaust -> {
                var responseTo = req.requestId
                reply.replies.transformWhile { item ->
                    val more = item.moreToCome && req.exhaustAllowed && !req.viaOpQuery
                    val id = RequestIds.next()
                    write(out, encode(req, responseTo, item.document, more, id))
                    responseTo = id
                    emit(Unit)
                    more
                }.collect()
            }
        }
        return true
    }

    private fun encode(req: Request, responseTo: Int, doc: BsonDocument, moreToCome: Boolean, id: Int = RequestIds.next()): ByteArray =
        if (req.viaOpQuery) {
            OpReply.encode(OpReply(id, responseTo, OpReply.AWAIT_CAPABLE, 0, 0, listOf(doc)))
        } else {
            OpMsgCodec.encode(OpMsg(id, responseTo, if (moreToCome) OpMsg.MORE_TO_COME else 0, doc))
        }

    private suspend fun write(out: ByteWriteChannel, bytes: ByteArray) {
        out.writeFully(bytes, 0, bytes.size)
        out.flush()
    }

    /** Stops accepting, closes every connection and cancels the server's coroutines. Idempotent; does not block. */
    override fun close() {
        if (!closed.compareAndSet(false, true)) return
        try { serverSocket.close() } catch (_: Exception) { }
        for (s in sockets) try { s.close() } catch (_: Exception) { }
        scope.cancel()
        selector.close()
    }

    companion object {
        /**
         * Binds to 127.0.0.1 on an ephemeral port (or, with [unixSocketPath], to that Unix domain
         * socket, which must not exist yet) and starts accepting.
         */
        suspend fun start(unixSocketPath: String? = null): WireServer {
            val selector = SelectorManager(Dispatchers.IO)
            val socket = try {
                if (unixSocketPath != null) {
                    aSocket(selector).tcp().bind(UnixSocketAddress(unixSocketPath))
                } else {
                    aSocket(selector).tcp().bind("127.0.0.1", 0)
                }
            } catch (e: Throwable) {
                selector.close()
                throw e
            }
            return WireServer(selector, socket).also { it.start() }
        }

        private fun isHello(name: String) = name == "hello" || name == "isMaster" || name == "ismaster"

        /** `{ok: 1}`. */
        fun ok(): BsonDocument = BsonDocument("ok", BsonInt32(1))

        /** A server error reply. */
        fun error(code: Int, codeName: String, errmsg: String): BsonDocument =
            BsonDocument("ok", BsonInt32(0)).append("errmsg", BsonString(errmsg))
                .append("code", BsonInt32(code)).append("codeName", BsonString(codeName))
    }
}
