package dev.mooring.spec.unified

import dev.mooring.cmap.MongoAuthenticationException
import dev.mooring.cmap.MongoCommandException

/** Where an operation's error came from, for the unified format's `isClientError`. */
object ErrorOrigin {
    /**
     * True when [error] did not come from a server reply (unified-test-format.md: network
     * errors, timeouts, pool and selection errors are client errors): anything but a command
     * error reply or a server-refused authentication (one with a server error code).
     */
    fun isClientError(error: Throwable): Boolean = when (error) {
        is MongoCommandException, is CrudWriteException -> false
        // the driver's write exceptions report a server reply's writeErrors / writeConcernError
        is dev.mooring.driver.MongoWriteException, is dev.mooring.driver.MongoWriteConcernException, is dev.mooring.driver.MongoBulkWriteException -> false
        // a client bulk write's top-level error decides; else its write errors / write concern errors came from the server
        is dev.mooring.driver.ClientBulkWriteException -> error.error?.let(::isClientError) ?: false
        is MongoAuthenticationException -> error.serverCode == null
        else -> true
    }
}
