package dev.mooring.spec.cmap

import dev.mooring.cmap.ConnectionCheckOutFailedEvent
import dev.mooring.cmap.ConnectionCheckOutStartedEvent
import dev.mooring.cmap.ConnectionCheckedInEvent
import dev.mooring.cmap.ConnectionCheckedOutEvent
import dev.mooring.cmap.ConnectionClosedEvent
import dev.mooring.cmap.ConnectionCreatedEvent
import dev.mooring.cmap.ConnectionPoolEvent
import dev.mooring.cmap.ConnectionReadyEvent
import dev.mooring.cmap.PoolClearedEvent
import dev.mooring.cmap.PoolClearedException
import dev.mooring.cmap.PoolClosedEvent
import dev.mooring.cmap.PoolClosedException
import dev.mooring.cmap.PoolCreatedEvent
import dev.mooring.cmap.PoolReadyEvent
import dev.mooring.cmap.WaitQueueTimeoutException
import dev.mooring.cmap.MongoServerException
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonNull
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.booleanOrNull
import kotlinx.serialization.json.doubleOrNull
import kotlin.time.Duration

/** The spec's event type name of a CMAP event. */
fun specTypeName(e: ConnectionPoolEvent): String = when (e) {
    is PoolCreatedEvent -> "ConnectionPoolCreated"
    is PoolReadyEvent -> "ConnectionPoolReady"
    is PoolClearedEvent -> "ConnectionPoolCleared"
    is PoolClosedEvent -> "ConnectionPoolClosed"
    is ConnectionCreatedEvent -> "ConnectionCreated"
    is ConnectionReadyEvent -> "ConnectionReady"
    is ConnectionClosedEvent -> "ConnectionClosed"
    is ConnectionCheckOutStartedEvent -> "ConnectionCheckOutStarted"
    is ConnectionCheckOutFailedEvent -> "ConnectionCheckOutFailed"
    is ConnectionCheckedOutEvent -> "ConnectionCheckedOut"
    is ConnectionCheckedInEvent -> "ConnectionCheckedIn"
}

private fun ms(d: Duration) = JsonPrimitive(d.inWholeNanoseconds / 1_000_000.0)

/** The event as the spec tests describe events: type, address, connectionId, duration (ms), options, reason, ... */
fun eventToJson(e: ConnectionPoolEvent): JsonObject {
    val m = LinkedHashMap<String, JsonElement>()
    m["type"] = JsonPrimitive(specTypeName(e))
    m["address"] = JsonPrimitive(e.address.toString())
    when (e) {
        is PoolCreatedEvent -> m["options"] = JsonObject(e.options.mapValues { (_, v) -> if (v is Number) JsonPrimitive(v) else JsonPrimitive(v.toString()) })
        is PoolClearedEvent -> {
            if (e.serviceId != null) m["serviceId"] = JsonPrimitive(e.serviceId!!.toHexString())
            m["interruptInUseConnections"] = JsonPrimitive(e.interruptInUseConnections)
        }
        is ConnectionCreatedEvent -> m["connectionId"] = JsonPrimitive(e.connectionId)
        is ConnectionReadyEvent -> {
            m["connectionId"] = JsonPrimitive(e.connectionId)
            m["duration"] = ms(e.duration)
        }
        is ConnectionClosedEvent -> {
            m["connectionId"] = JsonPrimitive(e.connectionId)
            m["reason"] = JsonPrimitive(e.reason.specName)
        }
        is ConnectionCheckOutFailedEvent -> {
            m["reason"] = JsonPrimitive(e.reason.specName)
            m["duration"] = ms(e.duration)
        }
        is ConnectionCheckedOutEvent -> {
            m["connectionId"] = JsonPrimitive(e.connectionId)
            m["duration"] = ms(e.duration)
        }
        is ConnectionCheckedInEvent -> m["connectionId"] = JsonPrimitive(e.connectionId)
        is PoolReadyEvent, is PoolClosedEvent, is ConnectionCheckOutStartedEvent -> Unit
    }
    return JsonObject(m)
}

/** The spec's error type name of an error the pool threw. */
fun specErrorType(t: Throwable): String = when (t) {
    is PoolClosedException -> "PoolClosedError"
    is PoolClearedException -> "PoolClearedError"
    is WaitQueueTimeoutException -> "WaitQueueTimeoutError"
    else -> t::class.simpleName ?: "Throwable"
}

fun errorToJson(t: Throwable): JsonObject {
    val m = LinkedHashMap<String, JsonElement>()
    m["type"] = JsonPrimitive(specErrorType(t))
    m["message"] = JsonPrimitive(t.message ?: "")
    if (t is MongoServerException) m["address"] = JsonPrimitive(t.address.toString())
    return JsonObject(m)
}

/**
 * The runner's MATCH: [expected] is a subset of [actual]; 42 and "42" mean "any value".
 * Returns null when it matches, else a description of the first mismatch.
 */
fun match(expected: JsonElement, actual: JsonElement?, path: String = "$"): String? {
    if (expected is JsonPrimitive && (expected.content == "42") && (expected.isString || expected.doubleOrNull == 42.0)) {
        return if (actual == null || actual is JsonNull) "$path: expected a value, found none" else null
    }
    if (actual == null) return "$path: expected $expected, found nothing"
    return when (expected) {
        is JsonObject -> {
            if (actual !is JsonObject) return "$path: expected an object, found $actual"
            for ((k, v) in expected) match(v, actual[k], "$path.$k")?.let { return it }
            null
        }
        is JsonArray -> {
            if (actual !is JsonArray) return "$path: expected an array, found $actual"
            for ((i, v) in expected.withIndex()) match(v, actual.getOrNull(i), "$path[$i]")?.let { return it }
            null
        }
        is JsonNull -> if (actual is JsonNull) null else "$path: expected null, found $actual"
        is JsonPrimitive -> {
            if (actual !is JsonPrimitive) return "$path: expected $expected, found $actual"
            if (expected.isString) {
                if (actual.isString && actual.content == expected.content) null else "$path: expected $expected, found $actual"
            } else if (expected.booleanOrNull != null) {
                if (actual.booleanOrNull == expected.booleanOrNull && !actual.isString) null else "$path: expected $expected, found $actual"
            } else {
                val e = expected.doubleOrNull
                if (!actual.isString && e != null && actual.doubleOrNull == e) null else "$path: expected $expected, found $actual"
            }
        }
    }
}
