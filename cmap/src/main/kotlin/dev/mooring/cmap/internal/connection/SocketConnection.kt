package dev.mooring.cmap.internal.connection

import dev.mooring.cmap.ConnectionAuthenticator
import dev.mooring.cmap.ConnectionDescription
import dev.mooring.cmap.ConnectionSettings
import dev.mooring.cmap.ExhaustConnection
import dev.mooring.cmap.MongoCommandException
import dev.mooring.cmap.MongoMessageEncodingException
import dev.mooring.cmap.MongoNetworkException
import dev.mooring.cmap.MongoNetworkTimeoutException
import dev.mooring.cmap.MongoProtocolException
import dev.mooring.cmap.MongoServerException
import dev.mooring.cmap.MongoTlsException
import dev.mooring.cmap.internal.auth.AuthSession
import dev.mooring.cmap.internal.auth.MechanismAuthenticator
import dev.mooring.cmap.internal.command.CommandRequestObserver
import dev.mooring.cmap.internal.command.ObservedCommand
import dev.mooring.cmap.internal.auth.OidcMechanism
import dev.mooring.cmap.internal.connection.socks.Socks5Handshake
import dev.mooring.cmap.internal.connection.tls.ClientTls
import dev.mooring.cmap.internal.connection.tls.TlsErrors
import dev.mooring.cmap.internal.wire.OpCompressed
import dev.mooring.cmap.internal.wire.compression.Compressor
import dev.mooring.cmap.internal.wire.compression.Compressors
import dev.mooring.cmap.internal.wire.BodyTrailer
import dev.mooring.cmap.internal.wire.CommandBody
import dev.mooring.cmap.internal.wire.MessageLimits
import dev.mooring.cmap.internal.wire.OpCode
import dev.mooring.cmap.internal.wire.OpMsg
import dev.mooring.cmap.internal.wire.OpMsgCodec
import dev.mooring.cmap.internal.wire.RequestIds
import dev.mooring.cmap.internal.wire.WireFormatException
import dev.mooring.events.ServerAddress
import io.ktor.network.selector.SelectorManager
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.TimeoutCancellationException
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.isActive
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeout
import kotlin.coroutines.CoroutineContext
import org.bson.BsonBoolean
import org.bson.BsonDocument
import org.bson.BsonString
import org.bson.BsonValue
import org.bson.io.BasicOutputBuffer
import java.util.concurrent.atomic.AtomicBoolean

/**
 * A CMAP connection over one TCP or Unix-domain socket: it opens the socket ([Connector], through
 * a SOCKS5 proxy when set), runs TLS and the handshake and authentication, then sends OP_MSG
 * commands and reads their replies through a [SocketTransport], whose waits are served by the
 * factory's event loops ([selector]). See [ExhaustConnection] for the concurrency contract:
 * single-track (enforced by [busy]), cancellation closes, [close] idempotent and non-blocking.
 */
internal class SocketConnection(
    override val address: ServerAddress,
    override val id: Long,
    override val generation: Int,
    private val settings: ConnectionSettings,
    private val selector: SelectorManager,
    private val handshake: Handshake,
    private val authenticator: ConnectionAuthenticator?,
    private val tls: ClientTls? = null,
    private val sockets: SocketRegistry? = null,
    private val establishGate: kotlinx.coroutines.sync.Semaphore? = null,
    /** Called once when this connection closes (the factory forgets it). */
    private val onClosed: (SocketConnection) -> Unit = {},
    /** Where the buffers of large messages come from and go back to (the factory's, shared by its connections); null: new ones, dropped. */
    private val sendBuffers: SendBufferPool? = null,
) : ExhaustConnection, ObservedCommand, LoopBound {
    private val closed = AtomicBoolean(false)
    private val busy = AtomicBoolean(false)
    private val establishStarted = AtomicBoolean(false)

    @Volatile private var transport: SocketTransport? = null

    override val homeLoop: EventLoop? get() = transport?.homeLoop

    @Volatile private var handshakeCompleted = false

    /**
     * Set while the MONGODB-OIDC human conversation finishes establishing, outside connectTimeoutMS's
     * `withTimeout`: the deadline that still bounds each of its round trips. Written and read by the
     * establishing coroutine only.
     */
    private var establishing: EstablishmentDeadline? = null

    @Volatile private var limits = MessageLimits.DEFAULT

    /** The negotiated compressor; null until the handshake agreed on one (the handshake itself is never compressed). */
    @Volatile private var compressor: Compressor? = null

    @Volatile override var description: ConnectionDescription? = null
        private set

    /** The buffers this connection encodes its requests into (guarded by [busy]). */
    private val buffers = MessageBuffers(sendBuffers)


    override val isClosed: Boolean get() = closed.get()

    override suspend fun establish() {
        check(establishStarted.compareAndSet(false, true)) { "establish() was already called on connection $id to $address" }
        acquire("establish")
        try {
            if (establishGate != null) establishGate.acquire() // waiting for a slot is not part of connectTimeoutMS
            try {
                establishGuarded()
            } finally {
                establishGate?.release()
            }
        } catch (e: Throwable) {
            close()
            throw e
        } finally {
            busy.set(false)
        }
    }

    /**
     * Connects, handshakes and authenticates, all within connectTimeoutMS ([EstablishmentDeadline]).
     * Connect, TLS, hello and authentication run in one `withTimeout`, except for MONGODB-OIDC's
     * human workflow: its callback has 5 minutes whatever connectTimeoutMS is (auth.md "OIDC Human
     * Callback"), so that conversation runs after the `withTimeout`, each of its round trips still
     * bounded by what is left of connectTimeoutMS ([establishing]).
     */
    private suspend fun establishGuarded() {
        val deadline = EstablishmentDeadline.start(settings.connectTimeoutMS)
        val humanOidc = (authenticator as? OidcMechanism)?.usesHumanCallback == true
        val (session, desc) = run {
            guarded(settings.connectTimeoutMS, "connecting and handshaking", null) {
                // socks5.md: every TCP connection goes through the proxy; a Unix domain socket cannot
                val proxy = settings.proxy?.takeUnless { address.isUnixSocket }
                val socket = if (proxy == null) {
                    Connector.connect(selector, address, settings.hostNameResolver)
                } else {
                    Socks5Handshake.reachProxy(proxy, address, generation) { Connector.connect(selector, it) }
                }
                val t = SocketTransport(socket, selector, tls?.newEngine(address))
                sockets?.register(t.job)
                transport = t
                if (closed.get()) {
                    t.close()
                    throw closedError()
                }
                if (proxy != null) Socks5Handshake(proxy, address, generation).run(t.plain)
                try {
                    t.startTls()
                } catch (e: java.io.EOFException) {
                    throw MongoTlsException(
                        "TLS handshake with $address failed: the server closed the connection " +
                            "(it may require a client certificate, or not speak TLS)",
                        address, generation, false, e,
                    )
                }
                val session = (authenticator as? MechanismAuthenticator)?.begin()
                val reply = roundTrip(handshake.command(session?.speculativeCommand()), trailerFor("admin"))
                val desc = handshake.describe(reply, address, generation)
                limits = MessageLimits(desc.maxBsonObjectSize, desc.maxMessageSizeBytes)
                compressor = desc.compressor?.let { Compressors.byName(it, settings.zlibCompressionLevel) }
                description = desc
                if (!humanOidc) authenticate(session, desc, deadline)
                session to desc
            }
        }
        if (humanOidc) {
            establishing = deadline
            try {
                authenticate(session, desc, deadline)
            } finally {
                establishing = null
            }
        }
        // SDAM counts authentication as part of the handshake ("beforeHandshakeCompletes")
        handshakeCompleted = true
    }

    /** Runs the authentication of an establishing connection, [deadline] in its context (the OIDC machine callback's timeout). */
    private suspend fun authenticate(session: AuthSession?, desc: ConnectionDescription, deadline: EstablishmentDeadline?) {
        val auth = authenticator ?: return
        busy.set(false)
        try {
            if (deadline == null) {
                if (session != null) session.authenticate(this, desc) else auth.authenticate(this, desc)
            } else {
                withContext(deadline) { if (session != null) session.authenticate(this@SocketConnection, desc) else auth.authenticate(this@SocketConnection, desc) }
            }
        } finally {
            if (!busy.compareAndSet(false, true)) error("authenticator left connection $id busy")
        }
    }

    override suspend fun command(database: String, command: BsonDocument): BsonDocument =
        command(database, command, socketTimeoutMS(), null)

    /** socketTimeoutMS, or none (0) for an operation under timeoutMS ([OperationSocketTimeout]), whose deadline bounds the round trip. */
    private suspend fun socketTimeoutMS(): Long = if (currentCoroutineContext()[OperationSocketTimeout.Key] != null) 0 else settings.socketTimeoutMS

    /**
     * True when this connection's mechanism can reauthenticate (auth.md "Reauthentication":
     * MONGODB-OIDC), so a ReauthenticationRequired (391) error is worth a [reauthenticate].
     */
    val canReauthenticate: Boolean get() = authenticator is OidcMechanism

    /**
     * Runs the SASL conversation again on this established connection, without a hello and
     * without speculative authentication. Must not run while another command is in progress.
     * Fails with [dev.mooring.cmap.MongoAuthenticationException]; a network error closes the connection.
     */
    suspend fun reauthenticate() {
        ensureOpen()
        val oidc = authenticator as? OidcMechanism ?: error("connection $id to $address cannot reauthenticate")
        oidc.reauthenticate(this)
    }

    override suspend fun command(database: String, command: BsonDocument, timeoutMS: Long): BsonDocument =
        command(database, command, timeoutMS, null)

    override suspend fun command(database: String, command: BsonDocument, observer: CommandRequestObserver): BsonDocument =
        command(database, command, socketTimeoutMS(), observer)

    private suspend fun command(database: String, command: BsonDocument, timeoutMS: Long, observer: CommandRequestObserver?): BsonDocument {
        ensureOpen()
        acquire("command")
        try {
            val trailer = trailerFor(database)
            establishing?.let { return establishingRoundTrip(it, timeoutMS, command, trailer, observer) }
            return guarded(timeoutMS, "running", command) {
                roundTrip(command, trailer, observer)
            }
        } finally {
            busy.set(false)
        }
    }

    /** A round trip of the conversation that finishes establishing: within [timeoutMS] (0 = none) and what is left of [deadline]. */
    private suspend fun establishingRoundTrip(
        deadline: EstablishmentDeadline, timeoutMS: Long, command: BsonDocument, trailer: BodyTrailer, observer: CommandRequestObserver?,
    ): BsonDocument {
        val action = "establishing within connectTimeoutMS=${deadline.connectTimeoutMS} ms, running"
        val remaining = deadline.remainingMS()
        if (remaining <= 0) {
            close()
            throw MongoNetworkTimeoutException("timed out ${describe(action, command)} on $address: no time was left", address, generation, false)
        }
        return guarded(if (timeoutMS in 1 until remaining) timeoutMS else remaining, action, command) { roundTrip(command, trailer, observer) }
    }

    override fun exhaust(database: String, command: BsonDocument, readTimeoutMS: Long): Flow<BsonDocument> = flow {
        ensureOpen()
        acquire("exhaust")
        var sent = false
        var finished = false
        try {
            val trailer = trailerFor(database)
            val requestId = RequestIds.next()
            val length = prepare(requestId, OpMsg.EXHAUST_ALLOWED, command, trailer)
            sent = true
            guarded(settings.socketTimeoutMS, "sending", command) { writePrepared(length) }
            var expected = requestId
            while (true) {
                val reply = guarded(readTimeoutMS, "awaiting an exhaust reply", null) { readOpMsg(expected) }
                expected = reply.requestId
                val doc = reply.bodyWithSequences()
                if (!reply.moreToCome) {
                    finished = true
                    emit(checkOk(doc))
                    break
                }
                emit(checkOk(doc))
            }
        } finally {
            // replies may still be on their way: the wire state is unknown unless the stream ended
            if (sent && !finished) close()
            busy.set(false)
        }
    }

    override fun close() {
        if (closed.compareAndSet(false, true)) {
            transport?.close()
            onClosed(this)
        }
    }

    override fun toString(): String = "SocketConnection(id=$id, address=$address, generation=$generation, closed=$isClosed)"

    // --- internals ---

    /**
     * Sends one OP_MSG and reads its single reply (no moreToCome allowed); an unacknowledged write
     * goes with moreToCome and is answered `{ok: 1}` without reading ([UnacknowledgedWrite]).
     * Must run inside [guarded].
     */
    @Suppress("NOTHING_TO_INLINE") // inline: no frame of its own on the command path
    private suspend inline fun roundTrip(body: BsonDocument, trailer: BodyTrailer, observer: CommandRequestObserver? = null): BsonDocument {
        val requestId = RequestIds.next()
        val unacknowledged = UnacknowledgedWrite.isUnacknowledged(body)
        val prepared = prepare(requestId, if (unacknowledged) OpMsg.MORE_TO_COME else 0, body, trailer)
        // the document as sent is built only for command monitoring
        observer?.sending(requestId, CommandBody.asSent(body, trailer))
        writePrepared(prepared)
        if (unacknowledged) return UnacknowledgedWrite.reply()
        val reply = readOpMsg(requestId)
        if (reply.moreToCome) throw WireFormatException("reply to a request without exhaustAllowed has moreToCome set")
        return checkOk(reply.bodyWithSequences())
    }

    @Suppress("NOTHING_TO_INLINE") // inline: no frame of its own on the command path
    private suspend inline fun readOpMsg(expectedResponseTo: Int): OpMsg {
        val raw = transport().readMessage(limits.maxMessageSizeBytes)
        if (raw.header.responseTo != expectedResponseTo) {
            throw WireFormatException("reply has responseTo ${raw.header.responseTo}, expected $expectedResponseTo")
        }
        return when (raw.header.opCode) {
            OpCode.OP_MSG -> OpMsgCodec.decode(raw.header, raw.headerBytes, raw.body)
            OpCode.OP_COMPRESSED -> {
                val inner = OpCompressed.unwrap(raw.header, raw.body, limits.maxMessageSizeBytes)
                if (inner.header.opCode != OpCode.OP_MSG) {
                    throw WireFormatException("OP_COMPRESSED wraps opCode ${inner.header.opCode}, expected OP_MSG")
                }
                OpMsgCodec.decode(inner.header, inner.headerBytes, inner.body)
            }
            else -> throw WireFormatException("unexpected opCode ${raw.header.opCode} in a reply to OP_MSG")
        }
    }

    /**
     * Encodes the request OP_MSG ([requestId], [flagBits], [body] with [trailer], no sequences)
     * for sending ([MessageBuffers.prepare], compressed when a compressor was negotiated and the
     * command may be); returns the length of the message left in [MessageBuffers.outgoing].
     * Encoding errors are [MongoMessageEncodingException]s.
     */
    private fun prepare(requestId: Int, flagBits: Int, body: BsonDocument, trailer: BodyTrailer?): Int = try {
        buffers.prepare(requestId, flagBits, body, trailer, limits, compressor)
    } catch (e: WireFormatException) {
        throw MongoMessageEncodingException("cannot send to $address: ${e.message}", e)
    }

    /** Writes the [length] bytes [prepare] left. Only tail calls on the usual path, so it costs no continuation. */
    private suspend fun writePrepared(length: Int) {
        val out = buffers.outgoing!!
        if (buffers.isKept(out)) return transport().write(out.internalBuffer, 0, length)
        return writeLarge(out, length)
    }

    /** Writes a large message, then gives its buffer back (a failed write drops it). */
    private suspend fun writeLarge(out: BasicOutputBuffer, length: Int) {
        buffers.writing(out)
        transport().write(out.internalBuffer, 0, length)
        buffers.written(out)
    }

    private fun checkOk(doc: BsonDocument): BsonDocument {
        val ok = doc["ok"]
        val isOk = ok != null && ((ok.isNumber && ok.asNumber().doubleValue() == 1.0) || (ok.isBoolean && ok.asBoolean().value))
        if (!isOk) throw MongoCommandException(doc, address, generation, handshakeCompleted)
        return doc
    }

    /**
     * The fields every command to [database] is sent with, after its own (the caller's document is
     * never copied nor changed; see [CommandBody]): `$db` and the Stable API fields
     * (versioned-api.md: the command is not inspected; the declared API replaces any the caller wrote).
     */
    private fun trailerFor(database: String): BodyTrailer {
        if (database.isEmpty()) throw IllegalArgumentException("database name must not be empty")
        val last = lastTrailer
        if (last != null && lastDatabase == database) return last
        val names = ArrayList<String>(4)
        val values = ArrayList<BsonValue>(4)
        names += "\$db"
        values += BsonString(database)
        settings.serverApi?.let { api ->
            names += "apiVersion"
            values += BsonString(api.version)
            api.strict?.let { names += "apiStrict"; values += BsonBoolean(it) }
            api.deprecationErrors?.let { names += "apiDeprecationErrors"; values += BsonBoolean(it) }
        }
        return BodyTrailer(names.toTypedArray(), values.toTypedArray()).also {
            lastTrailer = it
            lastDatabase = database
        }
    }

    /** The trailer of the last database: a connection usually serves one database (guarded by [busy]). */
    private var lastTrailer: BodyTrailer? = null
    private var lastDatabase: String? = null

    private fun transport(): SocketTransport = transport ?: throw closedError()

    private fun ensureOpen() {
        if (closed.get()) throw closedError()
        checkNotNull(description) { "connection $id to $address has not completed its handshake" }
    }

    private fun acquire(what: String) {
        check(busy.compareAndSet(false, true)) {
            "connection $id to $address is single-track: $what called while another operation is in progress"
        }
    }

    /** "running ping": the action and the command's name, built only for an error message. */
    private fun describe(action: String, command: BsonDocument?): String =
        if (command == null) action else "$action ${CommandBody.firstKey(command, null)}"

    private fun closedError() = MongoNetworkException("connection $id to $address is closed", address, generation, handshakeCompleted)

    /**
     * Runs [block] bounded by [timeoutMS] (0 = none) and maps failures to typed errors ([failure]).
     * Any failure except an `ok: 0` reply on an established connection closes the connection;
     * cancellation closes it too, because its wire state is unknown. Inline, so that without a
     * timeout neither it nor [block] costs a frame.
     */
    private suspend inline fun <T> guarded(timeoutMS: Long, action: String, command: BsonDocument?, crossinline block: suspend () -> T): T {
        try {
            return if (timeoutMS > 0) withTimeout(timeoutMS) { block() } else block()
        } catch (e: Exception) {
            throw failure(e, timeoutMS, action, command, currentCoroutineContext())
        }
    }

    /** What [guarded] throws for [e], raised by its block while the caller's context was [caller]; closes the connection as [guarded] says. */
    private fun failure(e: Exception, timeoutMS: Long, action: String, command: BsonDocument?, caller: CoroutineContext): Exception {
        when (e) {
            is MongoCommandException -> {
                // an ok: 0 reply to hello closes; one during authentication leaves the connection usable
                // (MONGODB-OIDC retries with a fresh token), and establish() closes it if authentication fails
                if (description == null) close()
                return e
            }
            is MongoServerException -> {
                close()
                return e
            }
            is MongoMessageEncodingException -> return e
            is TimeoutCancellationException -> {
                close()
                if (!caller.isActive) return e
                return MongoNetworkTimeoutException(
                    "timed out after $timeoutMS ms ${describe(action, command)} on $address", address, generation, handshakeCompleted, e,
                )
            }
            is CancellationException -> {
                val wasClosed = closed.get()
                close()
                if (!caller.isActive) return e
                // Our caller is still active, so the cancellation came from the socket: close() from
                // another coroutine (cancelCheck, interruptInUseConnections) or the peer resetting the
                // connection mid-message. For this caller that is a network error; letting the
                // CancellationException escape would silently end it (e.g. a monitor loop).
                val why = if (wasClosed) "connection was closed" else "the connection was reset"
                return MongoNetworkException("network error ${describe(action, command)} on $address: $why", address, generation, handshakeCompleted, e)
            }
            is javax.net.ssl.SSLException -> {
                close()
                return MongoTlsException("TLS failure ${describe(action, command)} on $address: ${TlsErrors.describe(e)}", address, generation, handshakeCompleted, e)
            }
            is WireFormatException -> {
                close()
                return MongoProtocolException("protocol error ${describe(action, command)} on $address: ${e.message}", address, generation, handshakeCompleted, e)
            }
            else -> {
                val wasClosed = closed.get()
                close()
                val reason = if (wasClosed) "connection was closed" else (e.message ?: e.javaClass.simpleName)
                return MongoNetworkException("network error ${describe(action, command)} on $address: $reason", address, generation, handshakeCompleted, e)
            }
        }
    }
}
