package dev.mooring.sdam

import java.util.concurrent.atomic.AtomicLong

/**
 * The unique id of one topology (one client), carried by every SDAM event it publishes.
 * Immutable value; [next] is thread-safe.
 */
public data class TopologyId(
    /** The id's text. */
    val value: String,
) {
    override fun toString(): String = value

    public companion object {
        private val counter = AtomicLong()

        /** A new id, unique within this JVM. Thread-safe. */
        @JvmStatic
        public fun next(): TopologyId = TopologyId("topology-${counter.incrementAndGet()}")
    }
}
