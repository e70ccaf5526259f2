package dev.mooring.java

import dev.mooring.cmap.ConnectionDescription
import dev.mooring.events.ServerAddress
import org.bson.BsonDocument
import org.bson.conversions.Bson
import java.util.concurrent.CompletableFuture

/**
 * A connection lent to the function given to [JavaMongoCluster.withConnection], valid only
 * until the [java.util.concurrent.CompletionStage] that function returned completes.
 *
 * **Concurrency.** A connection is single-track: at most one [command] may be in flight at a
 * time (a second concurrent one fails with [IllegalStateException]); chain commands with
 * `thenCompose`. Cancelling the future of [command], or the future of the enclosing
 * `withConnection`, cancels the command and closes the connection (its wire state is unknown
 * afterwards); the pool replaces it. After the lending ends, [command] returns a future that
 * has failed with [IllegalStateException].
 */
public interface JavaConnection {
    /** The server this connection talks to. */
    public fun address(): ServerAddress

    /** The id the pool assigned (the CMAP events' `connectionId`). */
    public fun id(): Long

    /** What the handshake learned about the server. */
    public fun description(): ConnectionDescription?

    /**
     * Runs [command] against [database] and completes with the reply (`ok: 1`), or
     * exceptionally with a `MongoCommandException`, a network error, [IllegalArgumentException]
     * for an empty database name or command, or [IllegalStateException] when another command
     * is in flight or the lending has ended. Completes on a Mooring thread: don't block in its
     * callbacks.
     */
    public fun command(database: String, command: Bson): CompletableFuture<BsonDocument>
}
