package dev.mooring.sdam.internal.session

import org.bson.BsonBinary
import org.bson.BsonDocument
import org.bson.UuidRepresentation
import java.util.UUID

/**
 * Internal API, not stable: one server session (driver-sessions.md): its [lsid] and the
 * transaction numbers of the retryable writes run in it. A session is used by one operation at
 * a time (the [ServerSessionPool] hands it out exclusively); [markDirty] may be called from the
 * holder only.
 */
internal class ServerSession internal constructor(id: UUID, createdNanos: Long) {
    /** `{id: <UUID, binary subtype 4>}`, the `lsid` sent with commands. Do not modify. */
    internal val lsid: BsonDocument = BsonDocument("id", BsonBinary(id, UuidRepresentation.STANDARD))

    private var txnNumber = 0L

    /** When the session id was last sent to a server (the pool's clock; its creation until then), for expiry. */
    @Volatile
    internal var lastUsedNanos: Long = createdNanos

    /** Set after a network error: the server may not know the session's state; it is discarded on release. */
    @Volatile
    internal var isDirty: Boolean = false
        private set

    /** The next transaction number (1, 2, ...), for a new retryable write. */
    internal fun nextTxnNumber(): Long = ++txnNumber

    /** Marks the session for discarding (a network error happened while it was in use). */
    internal fun markDirty() {
        isDirty = true
    }
}
