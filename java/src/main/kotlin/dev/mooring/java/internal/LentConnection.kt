package dev.mooring.java.internal

import dev.mooring.cmap.Connection
import dev.mooring.cmap.ConnectionDescription
import dev.mooring.events.ServerAddress
import dev.mooring.java.JavaConnection
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.future.future
import org.bson.BsonDocument
import org.bson.conversions.Bson
import java.util.concurrent.CompletableFuture
import java.util.concurrent.atomic.AtomicBoolean

/** The [JavaConnection] lent by `withConnection`; valid until [endLending]. */
internal class LentConnection(
    private val connection: Connection,
    private val scope: CoroutineScope,
) : JavaConnection {
    private val lent = AtomicBoolean(true)

    override fun address(): ServerAddress = connection.address

    override fun id(): Long = connection.id

    override fun description(): ConnectionDescription? = connection.description

    override fun command(database: String, command: Bson): CompletableFuture<BsonDocument> {
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

    fun endLending() {
        lent.set(false)
    }

    override fun toString(): String = "JavaConnection(${connection.address}, id=${connection.id})"
}
