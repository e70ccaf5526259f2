package dev.mooring.testkit.server

import dev.mooring.events.ServerAddress
import dev.mooring.testkit.server.changes.ChangeStreamCursors
import dev.mooring.testkit.server.changes.ChangeStreamFailPoint
import dev.mooring.testkit.wire.ClientMessage
import dev.mooring.testkit.wire.ServerWireCodec
import dev.mooring.testkit.wire.WireCompressor
import io.ktor.network.selector.SelectorManager
import io.ktor.network.sockets.InetSocketAddress
import io.ktor.network.sockets.ServerSocket
import io.ktor.network.sockets.Socket
import io.ktor.network.sockets.UnixSocketAddress
import io.ktor.network.sockets.aSocket
import io.ktor.network.sockets.openReadChannel
import io.ktor.network.sockets.openWriteChannel
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.cancel
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.collect
import kotlinx.coroutines.flow.map
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
 * hello/isMaster (answered by [hello]), ping, buildInfo, endSessions, killAllSessions, the data commands of
 * [collections] (insert, update, delete, findAndModify, ...; a find with `$where: "sleep(N) || true"` sleeps N ms first, see [WhereSleep]),
 * the cursor commands (find, aggregate, listCollections, listIndexes cut into batches kept per server, getMore, killCursors: [CursorCommands]),
 * configureFailPoint; anything else is `CommandNotFound` (59). Replies to
 * retryable writes (commands with `txnNumber`) get the `RetryableWriteError` label as MongoDB
 * 4.4+ adds it ([RetryableWriteLabels]), unless the fail point sets its own `errorLabels`.
 *
 * Concurrency: one coroutine per connection in a scope the server owns; [handler], [hello] and
 * the fail point may be replaced at any time from any thread. [close] stops accepting, closes
 * every connection and cancels every coroutine; it is idempotent and does not block.
 */
class WireServer private constructor(
    private val selector: SelectorManager,
    private val serverSocket: ServerSocket,
    /** TLS termination, or null for plain TCP. */
    val tls: ServerTlsConfig? = null,
    /** The in-memory collections behind the data commands (shared when several servers serve one data set). */
    val collections: InMemoryCollections = InMemoryCollections(),
) : AutoCloseable {
    private val scope = CoroutineScope(SupervisorJob() + Dispatchers.IO)
    private val sockets = ConcurrentHashMap.newKeySet<Socket>()
    private val connectionNumbers = AtomicInteger()
    private val closed = AtomicBoolean(false)
    private val failPoint = AtomicReference<FailCommandFailPoint?>(null)
    private val transactionalWriteFailPoint = AtomicReference<TransactionalWriteFailPoint?>(null)

    /** The TCP port the server listens on (0 for a Unix domain socket). */
    val port: Int = (serverSocket.localAddress as? InetSocketAddress)?.port ?: 0

    /** `127.0.0.1:port`, or the socket path. */
    val address: ServerAddress = (serverSocket.localAddress as? UnixSocketAddress)?.let { ServerAddress.unixSocket(it.path) }
        ?: ServerAddress("127.0.0.1", port)

    /** Connection and command counters. */
    val counters: WireServerCounters = WireServerCounters()

    /** The change streams open on this server (see [CursorCommands]). */
    val changeStreams: ChangeStreamCursors = ChangeStreamCursors()

    /** The cursors open on this server (see [CursorCommands]). */
    val cursors: ServerCursors = ServerCursors()

    /**
     * The owner of the cursors a request opens and may continue (see [ServerCursors]): 0 by
     * default; a load balancer sets its backend, so a getMore on another backend's connection fails.
     */
    @Volatile var cursorOwner: (RequestContext) -> Int = { 0 }

    /** Scripted handler consulted before the built-ins; null answers let the built-ins run. */
    @Volatile var handler: CommandHandler = { _, _, _ -> null }

    /**
     * The wire version this server reports in the built-in hello replies ([DefaultHello] and the
     * mongos replies built on it): 21 (MongoDB 7.0) by default. The built-in commands follow it:
     * the `bulkWrite` admin command (MongoDB 8.0, wire version 25) is CommandNotFound below 25.
     */
    @Volatile var maxWireVersion: Int = 21

    /** Produces the hello / legacy hello reply; replace to script topology changes. */
    @Volatile var hello: (RequestContext, BsonDocument) -> BsonDocument = DefaultHello::standalone

    /**
     * Compressors this server accepts (`snappy`, `zlib`, `zstd`); empty (the default) disables
     * compression. A hello asking for compression is answered with the common ones, requests may
     * then arrive as OP_COMPRESSED (counted in [WireServerCounters.compressedCommandCount]) and
     * replies to compressed requests are compressed with the connection's first agreed compressor.
     */
    @Volatile var compressors: List<String> = emptyList()

    /**
     * The streaming hello protocol of a 4.4+ server ([StreamingHello]), or null (the default) for
     * a server that answers every hello at once and reports no topologyVersion. Applies to the
     * built-in hello only (a [handler] answering hello scripts its own replies).
     */
    @Volatile var streaming: StreamingHello? = null

    /**
     * Whether replies to retryable writes get the `RetryableWriteError` label as MongoDB 4.4+
     * (wire version 9) adds it ([RetryableWriteLabels]); false simulates an older server, whose
     * drivers add the label themselves. Fail points' own `errorLabels` are sent either way.
     */
    @Volatile var labelsRetryableWriteErrors: Boolean = true

    /** The fail point in force, if any. */
    val activeFailPoint: FailCommandFailPoint? get() = failPoint.get()

    /**
     * Sets (or, with mode `off`, clears) the failCommand fail point without going through the
     * wire. [command] is the usual `{configureFailPoint: "failCommand", mode, data}` document.
     */
    fun configureFailPoint(command: BsonDocument) {
        if (command["configureFailPoint"]?.takeIf { it.isString }?.asString()?.value == TransactionalWriteFailPoint.NAME) {
            transactionalWriteFailPoint.set(TransactionalWriteFailPoint.parse(command))
        } else if (command["configureFailPoint"]?.takeIf { it.isString }?.asString()?.value == ChangeStreamFailPoint.NAME) {
            failPoint.set(FailCommandFailPoint.parse(ChangeStreamFailPoint.asFailCommand(command)))
        } else {
            failPoint.set(FailCommandFailPoint.parse(command))
        }
    }

    /** The `onPrimaryTransactionalWrite` fail point in force, if any (see [configureFailPoint]). */
    val activeTransactionalWriteFailPoint: TransactionalWriteFailPoint? get() = transactionalWriteFailPoint.get()

    /** Clears the fail point. */
    fun clearFailPoint() {
        failPoint.set(null)
        transactionalWriteFailPoint.set(null)
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
                        admittedConnections.remove(number)
                        // counted before the socket closes: a client that has seen the server close
                        // the connection (closeConnection, Reply.CloseConnection) must find it counted
                        counters.closed()
                        socket.close()
                    }
                }
            }
        }
    }

    private class Request(val viaOpQuery: Boolean, val requestId: Int, val exhaustAllowed: Boolean, val moreToCome: Boolean)

    private suspend fun serve(socket: Socket, number: Int) {
        val input = socket.openReadChannel()
        val output = socket.openWriteChannel(autoFlush = false)
        val engine = tls?.newEngine()
        val tlsSession = engine?.let { ServerTlsSession(it, input, output) }
        if (tlsSession != null) {
            try {
                tlsSession.handshake()
            } catch (e: Exception) {
                counters.tlsHandshakeFailed()
                throw e
            }
        }
        val peerCertificates = engine?.let { e ->
            try {
                e.session.peerCertificates.filterIsInstance<java.security.cert.X509Certificate>()
            } catch (_: javax.net.ssl.SSLPeerUnverifiedException) {
                emptyList()
            }
        } ?: emptyList()
        val stream = ServerStream(input, output, tlsSession)
        val remotePort = (socket.remoteAddress as? InetSocketAddress)?.port ?: 0
        var appName: String? = null
        var compressor: WireCompressor? = null
        while (true) {
            val header = ByteArray(ServerWireCodec.HEADER_LENGTH)
            stream.readFully(header)
            val message = header.copyOf(ServerWireCodec.messageLength(header))
            stream.readFully(message, ServerWireCodec.HEADER_LENGTH)
            val request = ServerWireCodec.decode(message)
            val compressedWith = request.compressorId
            val req = when (request) {
                is ClientMessage.Query -> Request(true, request.requestId, false, false)
                is ClientMessage.Msg -> Request(false, request.requestId, request.exhaustAllowed, request.moreToCome)
                is ClientMessage.Unsupported -> return
            }
            val db = request.database
            val cmd = request.command
            val name = cmd.keys.firstOrNull() ?: ""
            counters.command(name)
            if (compressedWith != null) counters.compressedCommand(name)
            val agreed = if (isHello(name)) ServerCompression.negotiate(cmd, compressors) else null
            if (agreed != null && compressor == null) {
                compressor = agreed.firstOrNull()?.let { ServerCompression.compressor(it) }
            }
            val replyCompressor = if (compressedWith != null) compressor else null
            if (appName == null && isHello(name)) {
                appName = (cmd["client"] as? BsonDocument)?.let { (it["application"] as? BsonDocument)?.get("name") }
                    ?.takeIf { it.isString }?.asString()?.value
            }
            val ctx = RequestContext(
                this, number, remotePort, req.viaOpQuery, appName, req.requestId, req.exhaustAllowed, name, engine != null, peerCertificates,
            )
            val keepOpen = coroutineScope {
                // a client that hangs up while its request is being handled ends the connection at once
                val watcher = launch {
                    if (!stream.awaitClientBytes()) throw java.io.IOException("client closed the connection")
                }
                try {
                    var reply = withClusterTime(ctx, db, cmd)
                    if (!agreed.isNullOrEmpty() && reply is Reply.Document) {
                        reply = Reply.Document(ServerCompression.answer(reply.document, agreed))
                    }
                    req.moreToCome || send(Outgoing(stream, replyCompressor), req, reply)
                } finally {
                    watcher.cancel()
                }
            }
            if (!keepOpen) return
        }
    }

    /**
     * The logical clock this server reports cluster times from ([ClusterTimeKeeper]; shared by
     * the servers of one deployment), or null (the default) for a server that reports none, as
     * a standalone mongod. With one, every document reply carries `$clusterTime` and
     * `operationTime`, and the `$clusterTime` of each request is checked first.
     */
    @Volatile var clusterTime: ClusterTimeKeeper? = null
        set(value) {
            field = value
            // change events carry the cluster time of their write
            if (value != null) collections.changeEvents.clock = value
        }

    private suspend fun withClusterTime(ctx: RequestContext, db: String, cmd: BsonDocument): Reply {
        val clock = clusterTime ?: return dispatch(ctx, db, cmd)
        clock.receive(cmd)?.let { return Reply.Document(clock.stamp(it)) }
        if (ctx.commandName in InMemoryCollections.WRITES) clock.tick()
        return stamped(clock, dispatch(ctx, db, cmd))
    }

    /** [reply] with [clock]'s cluster time in each document it sends (every reply of an exhaust stream, as mongod's). */
    private fun stamped(clock: ClusterTimeKeeper, reply: Reply): Reply = when (reply) {
        is Reply.Document -> Reply.Document(clock.stamp(reply.document))
        is Reply.Delayed -> Reply.Delayed(reply.millis, stamped(clock, reply.then))
        is Reply.Exhaust -> Reply.Exhaust(reply.replies.map { it.copy(document = clock.stamp(it.document)) })
        Reply.CloseConnection, is Reply.Raw -> reply
    }

    private suspend fun dispatch(ctx: RequestContext, db: String, cmd: BsonDocument): Reply {
        if (isHello(ctx.commandName) && ctx.connectionNumber !in admittedConnections) {
            if (!ingressConnectionRateLimiter.admit()) return Reply.CloseConnection
            admittedConnections.add(ctx.connectionNumber)
        }
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
            // failCommand's errorLabels replace the labels mongod would add
            if (fp.errorCode != null) return Reply.Document(withBaseBackoff(if (fp.errorLabels != null) fp.errorReply() else labelled(cmd, fp.errorReply())))
            val normal = answer(ctx, db, cmd)
            val wce = fp.writeConcernError
            return if (wce != null && normal is Reply.Document) {
                val withWce = normal.document.clone().append("writeConcernError", wce)
                fp.errorLabels?.let { withWce["errorLabels"] = it }
                Reply.Document(if (fp.errorLabels != null) withWce else labelled(cmd, withWce))
            } else {
                labelled(cmd, normal)
            }
        }
        return labelled(cmd, answer(ctx, db, cmd))
    }

    /**
     * The server parameter `externalClientBaseBackoffMS` (MongoDB 9.0+, set with `setParameter`):
     * when positive, overload errors (labelled `SystemOverloadedError`) carry it as `baseBackoffMS`.
     */
    @Volatile var externalClientBaseBackoffMS: Int = 0

    private fun withBaseBackoff(reply: BsonDocument): BsonDocument {
        val base = externalClientBaseBackoffMS
        val overloaded = (reply["errorLabels"] as? org.bson.BsonArray)?.any { it.isString && it.asString().value == "SystemOverloadedError" } == true
        return if (base > 0 && overloaded) reply.append("baseBackoffMS", BsonInt32(base)) else reply
    }

    /** The ingress connection establishment rate limiter (off until configured with `setParameter`). */
    val ingressConnectionRateLimiter: IngressConnectionRateLimiter = IngressConnectionRateLimiter()

    private val admittedConnections = ConcurrentHashMap.newKeySet<Int>()

    /**
     * `setParameter`: the parameters this server knows ([externalClientBaseBackoffMS], the
     * [ingressConnectionRateLimiter]'s); others are InvalidOptions (72).
     */
    private fun setParameter(cmd: BsonDocument): BsonDocument {
        if (ingressConnectionRateLimiter.configure(cmd)) return ok()
        val v = cmd["externalClientBaseBackoffMS"] ?: return error(72, "InvalidOptions", "no option found to set, use help:true to see options")
        if (!v.isNumber || v.asNumber().intValue() < 0) return error(2, "BadValue", "externalClientBaseBackoffMS must be a non-negative integer")
        externalClientBaseBackoffMS = v.asNumber().intValue()
        return ok()
    }

    /**
     * True for a mongos: the replies to commands in a transaction (`autocommit: false`) carry a
     * `recoveryToken` (transactions.md "recoveryToken field"), which any router accepts back.
     */
    @Volatile var sendsRecoveryTokens: Boolean = false

    /** The reply with the `RetryableWriteError` label MongoDB 4.4+ adds to retryable write errors (and a mongos's recoveryToken). */
    private fun labelled(cmd: BsonDocument, reply: Reply): Reply =
        if (reply is Reply.Document) Reply.Document(withRecoveryToken(cmd, labelled(cmd, reply.document))) else reply

    private fun withRecoveryToken(cmd: BsonDocument, reply: BsonDocument): BsonDocument =
        if (!sendsRecoveryTokens || !ServerTransactions.inTransaction(cmd) || reply.containsKey("recoveryToken")) reply
        else reply.clone().append("recoveryToken", BsonDocument("recoveryShardId", BsonString("shard0")))

    private fun labelled(cmd: BsonDocument, reply: BsonDocument): BsonDocument =
        TransactionLabels.apply(cmd, if (labelsRetryableWriteErrors) RetryableWriteLabels.apply(cmd, reply) else reply)

    private suspend fun answer(ctx: RequestContext, db: String, cmd: BsonDocument): Reply {
        WhereSleep.millis(cmd)?.let { delay(it) }
        try {
            handler(ctx, db, cmd)?.let { return it }
            val streamingHello = streaming
            if (streamingHello != null && isHello(ctx.commandName)) {
                return streamingHello.answer(ctx, cmd) { hello(ctx, cmd) } ?: Reply.Document(streamingHello.withTopologyVersion(hello(ctx, cmd)))
            }
            val cursorReply = CursorCommands.open(ctx, db, cmd, collections) ?: CursorCommands.continued(ctx, db, cmd)
            return Reply.Document(cursorReply ?: builtIn(ctx, db, cmd))
        } catch (_: FailPointClosedConnection) {
            return Reply.CloseConnection
        }
    }

    private fun builtIn(ctx: RequestContext, db: String, cmd: BsonDocument): BsonDocument = when (ctx.commandName) {
        "hello", "isMaster", "ismaster" -> hello(ctx, cmd)
        "ping", "endSessions" -> ok()
        // the test kit keeps no transactions or operations of a session to kill (its cursors die with their connection or killCursors)
        "killAllSessions" -> ok()
        "buildInfo", "buildinfo" -> BsonDocument("version", BsonString("7.0.0"))
            .append("versionArray", org.bson.BsonArray(listOf(7, 0, 0, 0).map { BsonInt32(it) }))
            .append("ok", BsonInt32(1))
        "setParameter" -> if (db == "admin") setParameter(cmd) else error(13, "Unauthorized", "setParameter may only be run against the admin database.")
        ClientBulkWriteCommand.NAME -> if (maxWireVersion < ClientBulkWriteCommand.WIRE_VERSION) notFound(ctx) else collections.execute(db, cmd, transactionalWriteFailPoint.get(), wireVersion = maxWireVersion)!!
        else -> collections.execute(db, cmd, transactionalWriteFailPoint.get(), if (sendsRecoveryTokens) this else null, maxWireVersion) ?: notFound(ctx)
    }

    private fun notFound(ctx: RequestContext) = error(59, "CommandNotFound", "no such command: '${ctx.commandName}'")

    /** Where replies go: the connection's stream, compressed with [compressor] when set. */
    private class Outgoing(val stream: ServerStream, val compressor: WireCompressor?)

    /** Writes [reply]; false when the connection must be closed. */
    private suspend fun send(out: Outgoing, req: Request, reply: Reply): Boolean {
        when (reply) {
            is Reply.Document -> write(out, encode(req, req.requestId, reply.document, moreToCome = false))
            Reply.CloseConnection -> return false
            is Reply.Raw -> {
                out.stream.write(reply.bytes(req.requestId))
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
                    val id = ServerWireCodec.nextRequestId()
                    write(out, encode(req, responseTo, item.document, more, id))
                    responseTo = id
                    emit(Unit)
                    more
                }.collect()
            }
        }
        return true
    }

    private fun encode(req: Request, responseTo: Int, doc: BsonDocument, moreToCome: Boolean, id: Int = ServerWireCodec.nextRequestId()): ByteArray =
        if (req.viaOpQuery) {
            ServerWireCodec.encodeReply(id, responseTo, ServerWireCodec.AWAIT_CAPABLE, listOf(doc))
        } else {
            ServerWireCodec.encodeMsg(id, responseTo, if (moreToCome) ServerWireCodec.MORE_TO_COME else 0, doc)
        }

    private suspend fun write(out: Outgoing, bytes: ByteArray) {
        val c = out.compressor
        out.stream.write(if (c != null) ServerWireCodec.compress(bytes, c) else bytes)
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
         * Binds to 127.0.0.1 on [port] (0, the default, picks an ephemeral port) or, with
         * [unixSocketPath], to that Unix domain socket, which must not exist yet; then starts
         * accepting. The TCP listening socket uses SO_REUSEADDR, so a closed server's port can be
         * bound again at once (the replica set simulator restarts members on the same port).
         */
        suspend fun start(
            unixSocketPath: String? = null,
            port: Int = 0,
            tls: ServerTlsConfig? = null,
            collections: InMemoryCollections = InMemoryCollections(),
        ): WireServer {
            require(port in 0..65535) { "port must be in 0..65535, got $port" }
            require(unixSocketPath == null || port == 0) { "a port cannot be combined with a Unix domain socket" }
            val selector = SelectorManager(Dispatchers.IO)
            val socket = try {
                if (unixSocketPath != null) {
                    aSocket(selector).tcp().bind(UnixSocketAddress(unixSocketPath))
                } else {
                    aSocket(selector).tcp().bind("127.0.0.1", port) { reuseAddress = true }
                }
            } catch (e: Throwable) {
                selector.close()
                throw e
            }
            return WireServer(selector, socket, tls, collections).also { it.start() }
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
