package dev.mooring.testkit.server

import kotlinx.coroutines.delay

/**
 * The ingress connection establishment rate limiter of MongoDB 8.2+ (client-backpressure.md
 * terms), set with `setParameter`: a token bucket refilled at [ratePerSec] tokens a second,
 * holding at most `ratePerSec * burstCapacitySecs`; a new connection's first hello takes a
 * token, waits for one when at most [maxQueueDepth] others wait, and is otherwise rejected (the
 * server closes the connection, as during the TLS handshake of a real deployment). Disabled
 * until [enabled]. Thread-safe (one lock).
 */
class IngressConnectionRateLimiter {
    @Volatile var enabled: Boolean = false
    @Volatile var ratePerSec: Double = 0.0
    @Volatile var burstCapacitySecs: Double = 0.0
    @Volatile var maxQueueDepth: Int = 0

    private var tokens: Double = -1.0 // -1: full bucket on first use
    private var refilledNanos: Long = System.nanoTime()
    private var queued = 0

    /** Applies the `ingressConnectionEstablishment*` fields of a `setParameter` [cmd]; false when it holds none. */
    fun configure(cmd: org.bson.BsonDocument): Boolean {
        var any = false
        cmd["ingressConnectionEstablishmentRateLimiterEnabled"]?.let { enabled = it.isBoolean && it.asBoolean().value || it.isNumber && it.asNumber().intValue() != 0; any = true }
        cmd["ingressConnectionEstablishmentRatePerSec"]?.takeIf { it.isNumber }?.let { ratePerSec = it.asNumber().doubleValue(); any = true }
        cmd["ingressConnectionEstablishmentBurstCapacitySecs"]?.takeIf { it.isNumber }?.let { burstCapacitySecs = it.asNumber().doubleValue(); any = true }
        cmd["ingressConnectionEstablishmentMaxQueueDepth"]?.takeIf { it.isNumber }?.let { maxQueueDepth = it.asNumber().intValue(); any = true }
        if (any) synchronized(this) { tokens = -1.0 }
        return any
    }

    /** Admits one new connection: true at once or after waiting in the queue, false when rejected. */
    suspend fun admit(): Boolean {
        if (!enabled) return true
        val wait = synchronized(this) {
            refill()
            when {
                tokens >= 1.0 -> { tokens -= 1.0; 0L }
                queued < maxQueueDepth && ratePerSec > 0 -> { queued++; tokens -= 1.0; ((-tokens) / ratePerSec * 1000).toLong().coerceAtLeast(1) }
                else -> return false
            }
        }
        if (wait > 0) {
            try {
                delay(wait)
            } finally {
                synchronized(this) { queued-- }
            }
        }
        return true
    }

    private fun refill() {
        val capacity = ratePerSec * burstCapacitySecs
        val now = System.nanoTime()
        tokens = if (tokens == -1.0) capacity else minOf(capacity, tokens + (now - refilledNanos) / 1e9 * ratePerSec)
        refilledNanos = now
    }
}
