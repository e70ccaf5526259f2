package dev.mooring.java

import dev.mooring.cmap.Connection
import dev.mooring.cmap.ConnectionDescription
import dev.mooring.events.ServerAddress
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.future.future
import org.bson.BsonDocument
import org.bson.conversions.Bson
import java.util.concurrent.CompletableFuture
import java.util.concurrent.atomic.AtomicBoolean

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
public class JavaConnection internal constructor(
    private val connection: Connection,
    private val scope: CoroutineScope,
) {
    private val lent = AtomicBoolean(true)

    /** The server this connection talks to. */
    public fun address(): ServerAddress = connection.address

    /** The id the pool assigned (the CMAP events' `connectionId`). */
    public fun id(): Long = connection.id

    /** What the handshake learned about the server. */
    public fun description(): ConnectionDescription? = connection.description

    /**
     * Runs [command] against [database] and completes with the reply (`ok: 1`), or
     * exceptionally with a `MongoCommandException`, a network error, or
     * [IllegalStateException] when another command is in flight or the lending has ended.
     * Completes on a Mooring thread: don't block in its callbacks.
     */
    public fun command(database: String, command: Bson): CompletableFuture<BsonDocument> {
        if (!lent.get()) {
            return CompletableFuture.failedFuture(IllegalStateException("this connection was returned to the pool when the withConnection stage completed"))
        }
        val doc = try {
            require(database.isNotEmpty()) { "database name must not be empty" }
            command.toBsonDocument().also { require(it.isNotEmpty()) { "command document must not be empty" } }
        } catch (e: RuntimeException) {
            return CompletableFuture.failedFuture(e)
        }
        return scope.future { connection.command(database, doc) }
    }

    internal fun endLending() {
        lent.set(false)
    }

    override fun toString(): String = "JavaConnection(${connection.address}, id=${connection.id})"
}
