package dev.mooring.cmap

import dev.mooring.cmap.internal.connection.ClientMetadata
import dev.mooring.cmap.internal.connection.Handshake
import dev.mooring.cmap.internal.connection.KtorConnection
import dev.mooring.cmap.internal.connection.SocketRegistry
import dev.mooring.events.ServerAddress
import io.ktor.network.selector.SelectorManager
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.Job
import kotlinx.coroutines.sync.Semaphore
import org.bson.BsonDocument
import java.util.concurrent.atomic.AtomicBoolean

/**
 * Creates Ktor raw-socket connections for one cluster. It owns one [SelectorManager] (on
 * [Dispatchers.IO]) shared by all its connections; [close] closes it, which also breaks every
 * connection still open. The client metadata document is computed once, here.
 *
 * Thread-safe: [create] and [createMonitoringConnection] may be called from any thread and do
 * no I/O (the pool may call them under its lock); the I/O happens in
 * [EstablishableConnection.establish]. After [close], both throw [IllegalStateException].
 *
 * TLS is not implemented yet: a factory with `tls.enabled` is rejected with
 * [IllegalArgumentException]. Authentication is delegated to [authenticator]; a credential
 * without an authenticator is rejected the same way, so no connection silently skips auth.
 *
 * @throws IllegalArgumentException when appName is longer than 128 bytes, a timeout is negative,
 *   TLS is enabled, or a credential is configured without an [authenticator].
 */
public class DefaultConnectionFactory(
    /** The settings every connection of this factory uses. */
    public val settings: ConnectionSettings,
    /** Wrapping libraries to append to the handshake metadata. */
    driverInfo: List<DriverInfo> = emptyList(),
    private val authenticator: ConnectionAuthenticator? = null,
) : ConnectionFactory, AutoCloseable {
    // The selector's loop coroutine is a child of this job, so close can wait for it to stop.
    private val selectorJob = Job()
    private val selector: SelectorManager = SelectorManager(Dispatchers.IO + selectorJob)
    private val sockets = SocketRegistry()
    private val monitorEstablishGate = Semaphore(MAX_MONITORING_CONNECTIONS_ESTABLISHING)
    private val closed = AtomicBoolean(false)

    /** The handshake's `client` document (at most 512 bytes). */
    public val clientMetadata: BsonDocument

    private val poolHandshake: Handshake
    private val monitorHandshake: Handshake

    init {
        try {
            require(settings.connectTimeoutMS >= 0) { "connectTimeoutMS must be >= 0, was ${settings.connectTimeoutMS}" }
            require(settings.socketTimeoutMS >= 0) { "socketTimeoutMS must be >= 0, was ${settings.socketTimeoutMS}" }
            require(!settings.tls.enabled) { "TLS is not supported yet by DefaultConnectionFactory" }
            require(settings.credential == null || authenticator != null) {
                "a credential is configured but no ConnectionAuthenticator was given"
            }
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
        return KtorConnection(address, id, generation, settings, selector, poolHandshake, authenticator, sockets)
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
        return KtorConnection(address, 0, 0, settings, selector, monitorHandshake, null, sockets, monitorEstablishGate)
    }

    /**
     * Closes the selector; every connection of this factory stops working. Idempotent,
     * non-blocking: the selector's coroutine stops (and releases its descriptors) a moment
     * later; [awaitClosed] waits for that.
     */
    override fun close() {
        closed.set(true)
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
     * Call it after closing the connections: sockets still closing get up to 5 s, then are
     * cancelled. Cancelling the wait leaves the close in effect. Idempotent.
     */
    public suspend fun awaitClosed() {
        closed.set(true)
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
