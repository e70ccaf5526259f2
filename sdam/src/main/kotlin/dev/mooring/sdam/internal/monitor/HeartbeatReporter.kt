package dev.mooring.sdam.internal.monitor

import dev.mooring.events.EventBus
import dev.mooring.events.LoggingSettings
import dev.mooring.events.ServerAddress
import dev.mooring.events.StructuredLog
import dev.mooring.sdam.ServerHeartbeatFailedEvent
import dev.mooring.sdam.ServerHeartbeatStartedEvent
import dev.mooring.sdam.ServerHeartbeatSucceededEvent
import dev.mooring.sdam.TopologyId
import org.bson.BsonDocument
import org.bson.json.JsonMode
import org.bson.json.JsonWriterSettings

/**
 * Publishes one monitor's heartbeat events on the [EventBus] and the SDAM logging spec's
 * "Server heartbeat started / succeeded / failed" messages on the `topology` log component (a
 * succeeded message carries the whole reply as relaxed extended JSON).
 * Each message is logged before its event is published. Called only from the monitor's own
 * coroutine; never suspends.
 */
internal class HeartbeatReporter(
    private val address: ServerAddress,
    private val bus: EventBus,
    private val topologyId: TopologyId?,
    logging: LoggingSettings = LoggingSettings.DEFAULT,
) {
    private val log = StructuredLog("topology", logging)

    /** Publishes the started event and message; returns the start time in [System.nanoTime] units. */
    fun started(driverConnectionId: Long?, serverConnectionId: Long?, awaited: Boolean): Long {
        log.debug("Server heartbeat started") {
            common(driverConnectionId, serverConnectionId)
            put("awaited", awaited)
        }
        bus.publish(ServerHeartbeatStartedEvent(address, driverConnectionId, awaited, System.currentTimeMillis()))
        return System.nanoTime()
    }

    /** Publishes the succeeded event and message for the heartbeat started at [startNanos]; returns its duration in nanoseconds. */
    fun succeeded(driverConnectionId: Long?, serverConnectionId: Long?, awaited: Boolean, startNanos: Long, reply: BsonDocument): Long {
        val d = (System.nanoTime() - startNanos).coerceAtLeast(0)
        log.debug("Server heartbeat succeeded") {
            common(driverConnectionId, serverConnectionId)
            put("awaited", awaited)
            put("durationMS", d / 1_000_000.0)
            // whole, not cut to maxDocumentLength: the SDAM logging spec's reply is the relaxed extended JSON of
            // the reply (parseable), where command logging's command and reply are the ones it says to truncate
            put("reply", reply.toJson(RELAXED))
        }
        bus.publish(ServerHeartbeatSucceededEvent(address, driverConnectionId, reply, d, awaited, System.currentTimeMillis()))
        return d
    }

    /** Publishes the failed event and message for the heartbeat started at [startNanos]. */
    fun failed(driverConnectionId: Long?, serverConnectionId: Long?, awaited: Boolean, startNanos: Long, failure: Throwable) {
        val d = (System.nanoTime() - startNanos).coerceAtLeast(0)
        log.debug("Server heartbeat failed") {
            common(driverConnectionId, serverConnectionId)
            put("awaited", awaited)
            put("durationMS", d / 1_000_000.0)
            put("failure", failure.toString())
        }
        bus.publish(ServerHeartbeatFailedEvent(address, driverConnectionId, failure, d, awaited, System.currentTimeMillis()))
    }

    private fun MutableMap<String, Any?>.common(driverConnectionId: Long?, serverConnectionId: Long?) {
        if (topologyId != null) put("topologyId", topologyId.value)
        put("serverHost", address.host)
        if (!address.isUnixSocket) put("serverPort", address.port)
        put("driverConnectionId", driverConnectionId)
        put("serverConnectionId", serverConnectionId)
    }

    private companion object {
        val RELAXED: JsonWriterSettings = JsonWriterSettings.builder().outputMode(JsonMode.RELAXED).build()
    }
}
