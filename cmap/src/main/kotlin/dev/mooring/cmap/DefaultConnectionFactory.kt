package dev.mooring.cmap

import dev.mooring.cmap.internal.connection.ConnectionSettingsRules
import dev.mooring.cmap.internal.connection.ClientMetadata
import dev.mooring.cmap.internal.connection.Handshake
import dev.mooring.cmap.internal.auth.AuthHooks
import dev.mooring.cmap.internal.auth.Authenticators
import dev.mooring.cmap.internal.connection.SendBufferPool
import dev.mooring.cmap.internal.connection.SocketConnection
import dev.mooring.cmap.internal.connection.EventLoopGroup
import dev.mooring.cmap.internal.connection.SocketRegistry
import dev.mooring.cmap.internal.connection.tls.ClientTls
import dev.mooring.events.ServerAddress
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.sync.Semaphore
import org.bson.BsonDocument
import java.util.concurrent.atomic.AtomicBoolean

/**
 * Creates the socket connections of one cluster. It owns the event loops (one thread per
 * core, `mooring-loop-N-i`, see [dispatcher]) whose selectors serve all its connections' sockets;
 * [close] closes them, which also breaks every connection still open, and the threads end when
 * their loops have stopped. The client metadata document is computed once, here.
 *
 * Thread-safe: [create] and [createMonitoringConnection] may be called from any thread and do
 * no I/O (the pool may call them under its lock); the I/O happens in
 * [EstablishableConnection.establish]. After [close], both throw [IllegalStateException].
 *
 * TLS: with `tls.enabled` every connection runs a TLS handshake (JDK SSLEngine) before the
 * MongoDB handshake; the SSLContext is the user's [TlsSettings.sslContext] or is built here,
 * once, from tlsCAFile / tlsCertificateKeyFile (read at construction). Host names are verified
 * unless tlsAllowInvalidHostnames. TLS failures are [MongoTlsException]s.
 *
 * Authentication: pooled connections authenticate with [authenticator] when given, else with
 * the mechanism of `settings.credential`: SCRAM-SHA-256 / SCRAM-SHA-1 (negotiated through
 * `saslSupportedMechs` when the credential names none), MONGODB-X509 (the TLS client
 * certificate), PLAIN (only over TLS unless [ConnectionSettings.allowPlainAuthWithoutTls]),
 * GSSAPI (the JDK's Kerberos SASL client) or MONGODB-AWS (credentials from the environment and
 * the AWS endpoints); SCRAM and X.509 authenticate speculatively in the handshake. Failures are
 * [MongoAuthenticationException]s naming the mechanism. MONGODB-OIDC (see [OidcCallback]) keeps
 * its token cache in this factory, and `dev.mooring.cmap.internal.auth.Reauthentication`
 * reauthenticates on error 391. Monitoring connections never authenticate.
 *
 * SOCKS5: with `settings.proxy` every connection goes through the proxy (see [ProxySettings]).
 *
 * Compression: the `compressors` list is offered in the handshake; the first one the server
 * accepts compresses every later message except those OP_COMPRESSED.md forbids.
 *
 * @throws IllegalArgumentException when appName is longer than 128 bytes, a timeout is negative,
 *   a compressor name or zlibCompressionLevel is invalid, a TLS file cannot be read, or the
 *   credential cannot be used (a mechanism Mooring does not implement, a missing username or
 *   password, X.509 without a client certificate, PLAIN without TLS), or tlsDisableOCSPEndpointCheck
 *   or tlsDisableCertificateRevocationCheck is set (Mooring checks no certificate revocation), or
 *   eventLoopThreads is outside 1..[MAX_EVENT_LOOPS].
 */
public class DefaultConnectionFactory internal constructor(
    /** The settings every connection of this factory uses. */
    public val settings: ConnectionSettings,
    /** Wrapping libraries to append to the handshake metadata. */
    driverInfo: List<DriverInfo> = emptyList(),
    /**
     * A custom authenticator for pooled connections; null (the default) means the mechanism of
     * `settings.credential` (or no authentication without a credential).
     */
    private val authenticator: ConnectionAuthenticator?,
    /** The outside world the mechanisms use (environment, AWS endpoints, Kerberos); tests replace it. */
    authHooks: AuthHooks,
) : ConnectionFactory, AutoCloseable {
    /** A factory for [settings]; see the class documentation. */
    public constructor(
        settings: ConnectionSettings,
        driverInfo: List<DriverInfo> = emptyList(),
        authenticator: ConnectionAuthenticator? = null,
    ) : this(settings, driverInfo, authenticator, AuthHooks.DEFAULT)

    // The sockets' selectors: settings.eventLoopThreads event loops (default one per core), each a
    // daemon thread of its own (not Dispatchers.IO: blocking workers added to the scheduler
    // Dispatchers.Default shares make every later dispatch pay for an unpark). The settings are
    // checked (ConnectionSettingsRules) before any thread starts.
    private val loops = EventLoopGroup(
        settings.eventLoopThreads.also {
            ConnectionSettingsRules.check(settings)?.let { message -> throw IllegalArgumentException(message) }
            ConnectionSettingsRules.unhonoured(settings)?.let { message -> throw IllegalArgumentException(message) }
        },
    )

    /**
     * This factory's event loops as a [CoroutineDispatcher]: the threads that select on its
     * connections' sockets ([ConnectionSettings.eventLoopThreads] of them, `mooring-loop-N-i`).
     * A coroutine running here that sends a command is resumed with the reply directly by the loop
     * that saw it arrive, on that loop's thread: no thread hand-off per reply. Code running here
     * must never block (it would stall every connection of that loop); use it for code that
     * suspends, as on any event loop.
     * After [close], coroutines dispatched here are cancelled and run on `Dispatchers.IO`.
     */
    public val dispatcher: CoroutineDispatcher get() = loops

    private val sockets = SocketRegistry()
    private val monitorEstablishGate = Semaphore(MAX_MONITORING_CONNECTIONS_ESTABLISHING)
    private val closed = AtomicBoolean(false)

    /** The handshake's `client` document (at most 512 bytes) new connections send; see [appendMetadata]. */
    public val clientMetadata: BsonDocument get() = metadata.get().document

    private class Metadata(val driverInfo: List<DriverInfo>, val document: BsonDocument)

    private val metadata: java.util.concurrent.atomic.AtomicReference<Metadata>

    private val poolHandshake: Handshake
    private val effectiveAuthenticator: ConnectionAuthenticator?
    private val tls: ClientTls?
    private val monitorHandshake: Handshake

    init {
        try {
            effectiveAuthenticator = authenticator ?: Authenticators.forCredential(settings, authHooks)
            tls = if (settings.tls.enabled) ClientTls(settings.tls) else null
            val infos = driverInfo.distinct()
            metadata = java.util.concurrent.atomic.AtomicReference(Metadata(infos, ClientMetadata.build(ClientMetadata.Inputs(settings.appName, infos))))
            poolHandshake = Handshake(settings, { clientMetadata }, forMonitoring = false)
            monitorHandshake = Handshake(settings, { clientMetadata }, forMonitoring = true)
        } catch (e: Throwable) {
            loops.close()
            throw e
        }
    }

    /**
     * Appends [info] to the handshake metadata of connections created from now on (handshake.md
     * "Appending metadata"): its fields are appended with `|` after the ones already there; an
     * [info] equal to one already given changes nothing. Established connections keep theirs.
     * Thread-safe.
     */
    public fun appendMetadata(info: DriverInfo) {
        metadata.updateAndGet { m ->
            if (info in m.driverInfo) m else (m.driverInfo + info).let { Metadata(it, ClientMetadata.build(ClientMetadata.Inputs(settings.appName, it))) }
        }
    }

    /** A pooled connection: full handshake, wire-version check, then [authenticator]. No I/O here. */
    override fun create(address: ServerAddress, id: Long, generation: Int): ExhaustConnection {
        check(!closed.get()) { "connection factory is closed" }
        return track(SocketConnection(address, id, generation, settings, loops, poolHandshake, effectiveAuthenticator, tls, sockets, null, forget, sendBuffers))
    }

    /**
     * A connection for an SDAM monitor (never pooled): the same handshake without auth and
     * without `saslSupportedMechs`, and without the wire-version check (SDAM records
     * incompatibility in the topology instead). Its [Connection.id] is 0 and generation 0.
     * At most [MAX_MONITORING_CONNECTIONS_ESTABLISHING] monitoring connections of this factory
     * connect and handshake at once; further `establish()` calls wait (cancellably) for a slot,
     * and their connectTimeoutMS starts when they get it.
     */
    public fun createMonitoringConnection(address: ServerAddress): ExhaustConnection {
        check(!closed.get()) { "connection factory is closed" }
        return track(SocketConnection(address, 0, 0, settings, loops, monitorHandshake, null, tls, sockets, monitorEstablishGate, forget))
    }

    /** The buffers of large messages, shared by the pooled connections of this factory (see [SendBufferPool]). */
    internal val sendBuffers: SendBufferPool = SendBufferPool()

    /** Connections created and not yet closed, so [close] can close them deterministically. */
    private val open: MutableSet<SocketConnection> = java.util.concurrent.ConcurrentHashMap.newKeySet()
    private val forget: (SocketConnection) -> Unit = { open.remove(it) }

    private fun track(c: SocketConnection): SocketConnection {
        open.add(c)
        // A close() racing with this create must not leave the new connection usable.
        if (closed.get()) c.close()
        return c
    }

    /**
     * Closes every connection this factory created (their in-flight and later operations fail
     * with a network error), then the event loops. Idempotent, non-blocking: the loops stop
     * (and release their descriptors) a moment later; [awaitClosed] waits for that.
     */
    override fun close() {
        if (closed.compareAndSet(false, true)) open.toList().forEach { it.close() }
        close0()
    }

    private val loopsClosed = AtomicBoolean(false)

    private fun close0() {
        if (loopsClosed.compareAndSet(false, true)) loops.close()
    }

    /**
     * Closes (as [close]) and suspends until the sockets of this factory's connections and the
     * event loops' threads have stopped, so no thread or descriptor of this factory is left.
     * Sockets still closing get up to 5 s, then are cancelled. Cancelling the wait leaves the
     * close in effect. Idempotent.
     */
    public suspend fun awaitClosed() {
        if (closed.compareAndSet(false, true)) open.toList().forEach { it.close() }
        sockets.awaitAll(SOCKET_CLOSE_WAIT_MILLIS)
        close0()
        loops.job.join()
    }

    /** Limits of every factory. */
    public companion object {
        /** At most this many event loops ([ConnectionSettings.eventLoopThreads]). */
        public const val MAX_EVENT_LOOPS: Int = 16

        /**
         * At most this many monitoring connections (server and RTT monitors) of one factory
         * establish at once, so a hello listing thousands of hosts does not open thousands of
         * sockets at the same moment: the topology tracks every host, and their monitors
         * connect in waves of this size.
         */
        public const val MAX_MONITORING_CONNECTIONS_ESTABLISHING: Int = 64
    }
}

/** How long the factory's close waits for sockets that are still closing before it cancels them. */
private const val SOCKET_CLOSE_WAIT_MILLIS = 5_000L
