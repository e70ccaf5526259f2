package dev.mooring.testkit.proxy

/**
 * A fault a [FaultProxy] applies to the bytes flowing in one [Direction]. Immutable values;
 * the proxy reads the current fault for every chunk it forwards, so a change applies to open
 * connections at their next chunk and to new connections from their first byte.
 *
 * A counting fault ([CloseAfterBytes]) counts per connection from the moment it was set, so
 * setting it again starts a new count.
 */
sealed interface Fault {
    /** Bytes pass unchanged. */
    data object None : Fault

    /** Every chunk is delayed by [millis] before it is forwarded (order is kept). */
    data class Latency(val millis: Long) : Fault {
        init {
            require(millis >= 0) { "latency must not be negative, was $millis" }
        }
    }

    /** Bytes are read and dropped: the connection stays open and the peer never hears back. */
    data object Blackhole : Fault

    /** The connection is reset (TCP RST to the client, close to the server) at its next chunk. */
    data object Reset : Fault

    /**
     * After [bytes] more bytes in this direction (counted per connection from when the fault
     * was set), the rest of the chunk is dropped and the connection is reset: a reply cut short.
     */
    data class CloseAfterBytes(val bytes: Long) : Fault {
        init {
            require(bytes >= 0) { "bytes must not be negative, was $bytes" }
        }
    }

    /** Every byte is replaced by garbage (XOR 0x5A): the peer reads a well-timed but meaningless stream. */
    data object Corrupt : Fault

    /** Forwarding is throttled to about [bytesPerSecond]. */
    data class Bandwidth(val bytesPerSecond: Long) : Fault {
        init {
            require(bytesPerSecond > 0) { "bytesPerSecond must be positive, was $bytesPerSecond" }
        }
    }
}

/** Which way bytes flow through a [FaultProxy]. */
enum class Direction {
    /** Client to server (requests). */
    UPSTREAM,

    /** Server to client (replies). */
    DOWNSTREAM,
}
