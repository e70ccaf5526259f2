package dev.mooring.cmap

import dev.mooring.cmap.internal.connection.ClientMetadata
import dev.mooring.cmap.internal.connection.Handshake
import dev.mooring.cmap.internal.auth.AuthHooks
import dev.mooring.cmap.internal.auth.Authenticators
import dev.mooring.cmap.internal.connection.KtorConnection
import dev.mooring.cmap.internal.connection.SelectorThread
import dev.mooring.cmap.internal.connection.SocketRegistry
import dev.mooring.cmap.internal.connection.tls.ClientTls
import dev.mooring.cmap.internal.wire.compression.Compressors
import dev.mooring.events.ServerAddress
import io.ktor.network.selector.SelectorManager
import kotlinx.coroutines.Job
import kotlinx.coroutines.sync.Semaphore
import org.bson.BsonDocument
import java.util.concurrent.atomic.AtomicBoolean

/**
 * Creates Ktor raw-socket connections for one cluster. It owns one [SelectorManager], whose
 * loop runs on a daemon thread of its own (`mooring-selector-N`), shared by all its
 * connections; [close] closes it, which also breaks every connection still open, and the thread
 * ends when the loop has stopped. The client metadata document is computed once, here.
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
 * [MongoAuthenticationException]s naming the mechanism. Monitoring connections never
 * authenticate.
 *
 * Compression: the `compressors` list is offered in the handshake; the first one the server
 * accepts compresses every later message except those OP_COMPRESSED.md forbids.
 *
 * @throws IllegalArgumentException when appName is longer than 128 bytes, a timeout is negative,
 *   a compressor name or zlibCompressionLevel is invalid, a TLS file cannot be read, or the
 *   credential cannot be used (a mechanism Mooring does not implement, a missing username or
 *   password, X.509 without a client certificate, PLAIN without TLS).
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

    // The selector's loop coroutine is a child of this job, so close can wait for it to stop.
    private val selectorJob = Job()

    // The selector loop blocks in select(): it gets a daemon thread of its own, shut down when
    // the loop has stopped. On Dispatchers.IO it would add blocking workers to the scheduler that
    // Dispatchers.Default shares, and every idle worker left there makes each later dispatch pay
    // for an unpark (measured: contended pool hand-offs 3-7x slower after a cluster had run).
    private val selectorThread = SelectorThread.start()
    private val selector: SelectorManager = SelectorManager(selectorThread.dispatcher + selectorJob)

    init {
        selectorJob.invokeOnCompletion { selectorThread.shutdown() }
    }
    private val sockets = SocketRegistry()
    private val monitorEstablishGate = Semaphore(MAX_MONITORING_CONNECTIONS_ESTABLISHING)
    private val closed = AtomicBoolean(false)

    /** The handshake's `client` document (at most 512 bytes). */
    public val clientMetadata: BsonDocument

    private val poolHandshake: Handshake
    private val effectiveAuthenticator: ConnectionAuthenticator?
    private val tls: ClientTls?
    private val monitorHandshake: Handshake

    init {
        try {
            require(settings.connectTimeoutMS >= 0) { "connectTimeoutMS must be >= 0, was ${settings.connectTimeoutMS}" }
            require(settings.socketTimeoutMS >= 0) { "socketTimeoutMS must be >= 0, was ${settings.socketTimeoutMS}" }
            for (name in settings.compressors) {
                require(name in Compressors.NAMES) { "unsupported compressor '$name' (supported: ${Compressors.NAMES.joinToString()})" }
            }
            require(settings.zlibCompressionLevel in -1..9) { "zlibCompressionLevel must be in -1..9, was ${settings.zlibCompressionLevel}" }
            effectiveAuthenticator = authenticator ?: Authenticators.forCredential(settings, authHooks)
            tls = if (settings.tls.enabled) ClientTls(settings.tls) else null
            clientMetadata = ClientMetadata.build(ClientMetadata.Inputs(settings.appName, driverInfo))
            poolHandshake = Handshake(settings, clientMetadata, forMonitoring = false)
            monitorHandshake = Handshake(settings, clientMetadata, forMonitoring = true)
        } catch (e: Throwable) {
            selector.close()
            selectorJob.complete()
            throw e
        }
    }

    /** A pooled connection: full handshake, wire-version check, then [authenticator]. No I/O here. */
    override fun create(address: ServerAddress, id: Long, generation: Int): ExhaustConnection {
        check(!closed.get()) { "connection factory is closed" }
        return track(KtorConnection(address, id, generation, settings, selector, poolHandshake, effectiveAuthenticator, tls, sockets, null, forget))
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
        return track(KtorConnection(address, 0, 0, settings, selector, monitorHandshake, null, tls, sockets, monitorEstablishGate, forget))
    }

    /** Connections created and not yet closed, so [close] can close them deterministically. */
    private val open: MutableSet<KtorConnection> = java.util.concurrent.ConcurrentHashMap.newKeySet()
    private val forget: (KtorConnection) -> Unit = { open.remove(it) }

    private fun track(c: KtorConnection): KtorConnection {
        open.add(c)
        // A close() racing with this create must not leave the new connection usable.
        if (closed.get()) c.close()
        return c
    }

    /**
     * Closes every connection this factory created (their in-flight and later operations fail
     * with a network error), then the selector. Idempotent, non-blocking: the selector's
     * coroutine stops (and releases its descriptors) a moment later; [awaitClosed] waits for that.
     */
    override fun close() {
        if (closed.compareAndSet(false, true)) open.toList().forEach { it.close() }
        close0()
    }

    private val selectorClosed = AtomicBoolean(false)

    private fun close0() {
        if (selectorClosed.compareAndSet(false, true)) {
            selector.close()
            selectorJob.complete()
        }
    }

    /**
     * Closes (as [close]) and suspends until the sockets of this factory's connections and the
     * selector's coroutine have stopped, so no coroutine or descriptor of this factory is left.
     * Sockets still closing get up to 5 s, then are cancelled. Cancelling the wait leaves the
     * close in effect. Idempotent.
     */
    public suspend fun awaitClosed() {
        if (closed.compareAndSet(false, true)) open.toList().forEach { it.close() }
        sockets.awaitAll(SOCKET_CLOSE_WAIT_MILLIS)
        close0()
        selectorJob.join()
    }

    /** Limits of every factory. */
    public companion object {
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
