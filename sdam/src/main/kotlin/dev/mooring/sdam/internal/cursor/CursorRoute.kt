package dev.mooring.sdam.internal.cursor

import dev.mooring.events.ServerAddress
import dev.mooring.sdam.internal.topology.ConnectionPin

/** Where a cursor's getMore and killCursors commands go. Immutable. */
internal sealed interface CursorRoute {
    /** The server that opened the cursor. */
    val address: ServerAddress

    /** A connection checked out of [address]'s pool for each command. */
    class OnServer(override val address: ServerAddress) : CursorRoute

    /**
     * The connection that opened the cursor, kept checked out (load-balanced mode) until [pin] is
     * released: by the cursor, or for a cursor of a transaction ([ConnectionPin.transaction]) by the transaction.
     */
    class Pinned(override val address: ServerAddress, val pin: ConnectionPin) : CursorRoute
}
