package dev.mooring.cmap

import dev.mooring.cmap.internal.connection.ClientMetadata
import dev.mooring.cmap.internal.connection.Handshake
import dev.mooring.cmap.internal.connection.KtorConnection
import dev.mooring.events.ServerAddress
import io.ktor.network.selector.SelectorManager
import kotlinx.coroutines.Dispatchers
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
    private val selector: SelectorManager = SelectorManager(Dispatchers.IO)
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
            throw e
        }
    }

    /** A pooled connection: full handshake, wire-version check, then [authenticator]. No I/O here. */
    override fun create(address: ServerAddress, id: Long, generation: Int): ExhaustConnection {
        check(!closed.get()) { "connection factory is closed" }
        return KtorConnection(address, id, generation, settings, selector, poolHandshake, authenticator)
    }

    /**
     * A connection for an SDAM monitor (never pooled): the same handshake without auth and
     * without `saslSupportedMechs`, and without the wire-version check (SDAM records
     * incompatibility in the topology instead). Its [Connection.id] is 0 and generation 0.
     */
    public fun createMonitoringConnection(address: ServerAddress): ExhaustConnection {
        check(!closed.get()) { "connection factory is closed" }
        return KtorConnection(address, 0, 0, settings, selector, monitorHandshake, null)
    }

    /** Closes the selector; every connection of this factory stops working. Idempotent, non-blocking. */
    override fun close() {
        if (closed.compareAndSet(false, true)) selector.close()
    }
}
