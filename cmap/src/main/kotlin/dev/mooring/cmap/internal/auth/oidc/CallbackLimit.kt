package dev.mooring.cmap.internal.auth.oidc

import dev.mooring.cmap.internal.auth.OperationDeadline
import dev.mooring.cmap.internal.connection.EstablishmentDeadline
import kotlin.time.Duration
import kotlin.time.Duration.Companion.milliseconds

/** How long one call of an OIDC callback may take, and what running out of it means. Immutable. */
internal sealed interface CallbackLimit {
    /** The timeout passed to the callback (and after which it is cancelled), computed now. */
    fun timeout(): Duration

    /** A fixed limit (auth.md: 5 minutes for the human callback, 1 minute when CSOT is not applied); running out is a callback failure. */
    class Fixed(private val limit: Duration) : CallbackLimit {
        override fun timeout(): Duration = limit
    }

    /**
     * What is left of the timeoutMS of the operation a reauthentication runs for. The operation's
     * own bound cuts the callback off at that deadline (a timeout of the operation), so no other is set.
     */
    class Operation(val deadline: OperationDeadline) : CallbackLimit {
        override fun timeout(): Duration = deadline.remainingMS().milliseconds
    }

    /** What is left of a connection's establishment deadline; running out is the connection's connectTimeoutMS expiring. */
    class Establishment(val deadline: EstablishmentDeadline) : CallbackLimit {
        override fun timeout(): Duration = deadline.remainingMS().milliseconds
    }
}
