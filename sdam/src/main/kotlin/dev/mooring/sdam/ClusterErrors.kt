package dev.mooring.sdam

import dev.mooring.events.MooringException

/**
 * Server selection found no suitable server within serverSelectionTimeoutMS (or the remaining
 * timeoutMS). The message describes the [topology] the selection last saw: its type and every
 * server's address, type and error. Immutable apart from error labels; thread-safe.
 */
public class MongoServerSelectionTimeoutException(
    message: String,
    /** The last topology description the selection saw. */
    public val topology: TopologyDescription,
    /** How long the selection waited, in milliseconds. */
    public val timeoutMS: Long,
) : MooringException(message) {
    public companion object {
        /** The message for a selection of [selector] that waited [timeoutMS] ms and last saw [topology]. */
        @JvmStatic
        public fun describe(selector: String, timeoutMS: Long, topology: TopologyDescription): String = buildString {
            append("Timed out after ").append(timeoutMS).append(" ms while waiting for a server that matches ").append(selector)
            append(". Topology type: ").append(topology.type.specName)
            topology.setName?.let { append(", replica set: ").append(it) }
            append(", servers: [")
            topology.servers.values.forEachIndexed { i, s ->
                if (i > 0) append(", ")
                append("{address: ").append(s.address).append(", type: ").append(s.type)
                s.error?.let { append(", error: ").append(it) }
                append('}')
            }
            append(']')
            topology.compatibilityError?.let { append(". ").append(it) }
        }
    }
}

/**
 * The client-side operation timeout (`timeoutMS`) expired before the operation finished
 * (selection, checkout and the command together). The operation may or may not have reached
 * the server. Thread-safe.
 */
public class MongoOperationTimeoutException(message: String, cause: Throwable? = null) : MooringException(message, cause)

/** An operation was started on, or was still waiting in, a cluster that is closed or closing. Thread-safe. */
public class MongoClusterClosedException(message: String) : MooringException(message)
