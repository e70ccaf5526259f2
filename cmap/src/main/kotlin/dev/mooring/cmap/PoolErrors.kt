package dev.mooring.cmap

import dev.mooring.events.ServerAddress

/** The error labels the pool attaches to errors that retry logic must retry (the CMAP "RetryableError" family). */
public object PoolErrorLabels {
    /** Retryable-writes label: the operation may be retried as a write. */
    public const val RETRYABLE_WRITE_ERROR: String = "RetryableWriteError"

    /** The command is safely retryable whatever its type (nothing reached the server). */
    public const val RETRYABLE_ERROR: String = "RetryableError"

    /** Backpressure: the server may be overloaded (added to establishment network errors). */
    public const val SYSTEM_OVERLOADED_ERROR: String = "SystemOverloadedError"
}

/**
 * Thrown by [ConnectionPool.checkOut] on a closed pool (CMAP `PoolClosedError`). Not retryable
 * against this pool. Immutable apart from error labels (thread-safe).
 */
public class PoolClosedException(address: ServerAddress) :
    MongoServerException(MESSAGE, address) {
    public companion object {
        /** The spec's message. */
        public const val MESSAGE: String = "Attempted to check out a connection from closed connection pool"
    }
}

/**
 * Thrown when the pool is paused or was cleared while a checkout waited (CMAP `PoolClearedError`),
 * and by operations on an in-use connection interrupted by `clear(interruptInUseConnections = true)`.
 * Always retryable: it carries [PoolErrorLabels.RETRYABLE_WRITE_ERROR] and
 * [PoolErrorLabels.RETRYABLE_ERROR], and it must not mark the server Unknown. Thread-safe.
 */
public class PoolClearedException(
    address: ServerAddress,
    message: String,
    cause: Throwable? = null,
) : MongoServerException(message, address, cause = cause) {
    init {
        addErrorLabel(PoolErrorLabels.RETRYABLE_WRITE_ERROR)
        addErrorLabel(PoolErrorLabels.RETRYABLE_ERROR)
    }

    /** Always true: the operation never reached the server through this pool, or its connection was interrupted. */
    public val isRetryable: Boolean get() = true

    public companion object {
        /** The spec's message for a checkout from a paused or cleared pool. */
        public fun clearedMessage(address: ServerAddress, cause: Throwable?): String =
            "Connection pool for $address was cleared because another operation failed with: ${cause?.toString() ?: "unknown error"}"

        /** The spec's message for an operation whose in-use connection was interrupted. */
        public fun interruptedMessage(address: ServerAddress): String =
            "Connection to $address interrupted due to server monitor timeout"
    }
}

/**
 * Thrown by [ConnectionPool.checkOut] when waitQueueTimeoutMS elapsed before a connection (or a
 * slot to establish one) became available (CMAP `WaitQueueTimeoutError`). Thread-safe.
 */
public class WaitQueueTimeoutException @JvmOverloads constructor(
    address: ServerAddress,
    /** The timeout that elapsed, in milliseconds. */
    public val waitQueueTimeoutMS: Long,
    message: String = MESSAGE,
) : MongoServerException(message, address) {
    public companion object {
        /** The spec's message. */
        public const val MESSAGE: String = "Timed out while checking out a connection from connection pool"

        /**
         * The detailed message load-balancers.md requires in load-balanced mode, verbatim:
         * "Timeout waiting for connection from the connection pool. maxPoolSize: n, connections
         * in use by cursors: n, connections in use by transactions: n, connections in use by
         * other operations: n".
         */
        @JvmStatic
        public fun loadBalancedMessage(maxPoolSize: Int, cursors: Int, transactions: Int, others: Int): String =
            "Timeout waiting for connection from the connection pool. maxPoolSize: $maxPoolSize, " +
                "connections in use by cursors: $cursors, connections in use by transactions: $transactions, " +
                "connections in use by other operations: $others"
    }
}
