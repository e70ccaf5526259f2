package dev.mooring.cmap.internal.pool

import dev.mooring.cmap.ConnectionCheckOutFailedEvent
import dev.mooring.cmap.ConnectionCheckOutFailedReason
import dev.mooring.cmap.ConnectionCheckOutStartedEvent
import dev.mooring.cmap.ConnectionCheckedInEvent
import dev.mooring.cmap.ConnectionCheckedOutEvent
import dev.mooring.cmap.ConnectionClosedEvent
import dev.mooring.cmap.ConnectionClosedReason
import dev.mooring.cmap.ConnectionCreatedEvent
import dev.mooring.cmap.ConnectionPoolSettings
import dev.mooring.cmap.ConnectionReadyEvent
import dev.mooring.cmap.PoolClearedEvent
import dev.mooring.cmap.PoolClosedEvent
import dev.mooring.cmap.PoolCreatedEvent
import dev.mooring.cmap.PoolReadyEvent
import dev.mooring.events.EventBus
import dev.mooring.events.LoggingSettings
import dev.mooring.events.ServerAddress
import dev.mooring.events.StructuredLog
import org.bson.types.ObjectId
import kotlin.time.Duration
import kotlin.time.Duration.Companion.nanoseconds

/**
 * Publishes the CMAP events and the spec's DEBUG log messages (component `connection`) of one
 * pool. Called under the pool's lock, so publication order is the pool's order. Each message is
 * logged before its event is published, so whoever sees an event also finds its log message. Builds nothing
 * when there is neither a subscriber nor an enabled logger or log sink.
 */
internal class PoolEventEmitter(
    private val address: ServerAddress,
    private val bus: EventBus,
    logging: LoggingSettings = LoggingSettings.DEFAULT,
) {
    private val log = StructuredLog("connection", logging)

    private fun MutableMap<String, Any?>.common() {
        put("serverHost", address.host)
        if (!address.isUnixSocket) put("serverPort", address.port)
    }

    private fun ms(d: Duration): Double = d.inWholeNanoseconds / 1_000_000.0

    fun poolCreated(settings: ConnectionPoolSettings) {
        val options = nonDefaultOptions(settings)
        log.debug("Connection pool created") {
            common()
            putAll(options)
        }
        if (bus.hasSubscribers) bus.publish(PoolCreatedEvent(address, options, settings))
    }

    fun poolReady() {
        log.debug("Connection pool ready") { common() }
        if (bus.hasSubscribers) bus.publish(PoolReadyEvent(address))
    }

    fun poolCleared(serviceId: ObjectId?, interrupt: Boolean) {
        log.debug("Connection pool cleared") {
            common()
            if (serviceId != null) put("serviceId", serviceId.toHexString())
        }
        if (bus.hasSubscribers) bus.publish(PoolClearedEvent(address, serviceId, interrupt))
    }

    fun poolClosed() {
        log.debug("Connection pool closed") { common() }
        if (bus.hasSubscribers) bus.publish(PoolClosedEvent(address))
    }

    fun connectionCreated(id: Long) {
        log.debug("Connection created") {
            common()
            put("driverConnectionId", id)
        }
        if (bus.hasSubscribers) bus.publish(ConnectionCreatedEvent(address, id))
    }

    fun connectionReady(id: Long, sinceNanos: Long) {
        if (!bus.hasSubscribers && !log.isDebugEnabled) return
        val d = elapsed(sinceNanos)
        log.debug("Connection ready") {
            common()
            put("driverConnectionId", id)
            put("durationMS", ms(d))
        }
        if (bus.hasSubscribers) bus.publish(ConnectionReadyEvent(address, id, d))
    }

    fun connectionClosed(id: Long, reason: ConnectionClosedReason, error: Throwable?) {
        log.debug("Connection closed") {
            common()
            put("driverConnectionId", id)
            put("reason", reason.logText)
            if (reason == ConnectionClosedReason.ERROR && error != null) put("error", error.toString())
        }
        if (bus.hasSubscribers) bus.publish(ConnectionClosedEvent(address, id, reason, error))
    }

    fun checkOutStarted() {
        log.debug("Connection checkout started") { common() }
        if (bus.hasSubscribers) bus.publish(ConnectionCheckOutStartedEvent(address))
    }

    fun checkOutFailed(reason: ConnectionCheckOutFailedReason, startNanos: Long, error: Throwable) {
        if (!bus.hasSubscribers && !log.isDebugEnabled) return
        val d = elapsed(startNanos)
        log.debug("Connection checkout failed") {
            common()
            put("reason", reason.logText)
            if (reason == ConnectionCheckOutFailedReason.CONNECTION_ERROR) put("error", error.toString())
            put("durationMS", ms(d))
        }
        if (bus.hasSubscribers) bus.publish(ConnectionCheckOutFailedEvent(address, reason, d, error))
    }

    fun checkedOut(id: Long, startNanos: Long) {
        if (!bus.hasSubscribers && !log.isDebugEnabled) return
        val d = elapsed(startNanos)
        log.debug("Connection checked out") {
            common()
            put("driverConnectionId", id)
            put("durationMS", ms(d))
        }
        if (bus.hasSubscribers) bus.publish(ConnectionCheckedOutEvent(address, id, d))
    }

    fun checkedIn(id: Long) {
        log.debug("Connection checked in") {
            common()
            put("driverConnectionId", id)
        }
        if (bus.hasSubscribers) bus.publish(ConnectionCheckedInEvent(address, id))
    }

    private fun elapsed(sinceNanos: Long): Duration = (System.nanoTime() - sinceNanos).coerceAtLeast(0).nanoseconds

    companion object {
        private val DEFAULTS = ConnectionPoolSettings()

        /** The options that differ from the defaults, by their URI option names. */
        fun nonDefaultOptions(s: ConnectionPoolSettings): Map<String, Any> {
            val m = LinkedHashMap<String, Any>()
            if (s.maxIdleTimeMS != DEFAULTS.maxIdleTimeMS) m["maxIdleTimeMS"] = s.maxIdleTimeMS
            if (s.minPoolSize != DEFAULTS.minPoolSize) m["minPoolSize"] = s.minPoolSize
            if (s.maxPoolSize != DEFAULTS.maxPoolSize) m["maxPoolSize"] = s.maxPoolSize
            if (s.maxConnecting != DEFAULTS.maxConnecting) m["maxConnecting"] = s.maxConnecting
            if (s.waitQueueTimeoutMS != DEFAULTS.waitQueueTimeoutMS) m["waitQueueTimeoutMS"] = s.waitQueueTimeoutMS
            return m
        }
    }
}
