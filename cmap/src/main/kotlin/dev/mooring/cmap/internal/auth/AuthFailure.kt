package dev.mooring.cmap.internal.auth

import dev.mooring.cmap.Connection
import dev.mooring.cmap.MongoAuthenticationException
import dev.mooring.cmap.MongoCommandException

/** Why the client gave up on a conversation. The message never contains a secret. */
internal class AuthFailure(message: String, cause: Throwable? = null) : Exception(message, cause)

/**
 * Runs [block], turning a server refusal ([MongoCommandException]) or a client-side [AuthFailure]
 * into a [MongoAuthenticationException] that names [mechanism] and [who] (user and source, never
 * a secret). Network and protocol errors pass through unchanged.
 */
internal suspend fun <T> authenticating(mechanism: String, who: String, connection: Connection, block: suspend () -> T): T {
    try {
        return block()
    } catch (e: MongoCommandException) {
        throw MongoAuthenticationException(
            "Authentication failed for $who with $mechanism: server error ${e.code}${e.codeName?.let { " ($it)" } ?: ""}: " +
                (e.errmsg ?: "no message"),
            connection.address, connection.generation, e.code, e,
        )
    } catch (e: AuthFailure) {
        throw MongoAuthenticationException(
            "Authentication failed for $who with $mechanism: ${e.message}",
            connection.address, connection.generation, null, e,
        )
    }
}
