package dev.mooring.bench.mooring

import dev.mooring.cmap.ConnectionDescription
import dev.mooring.cmap.ConnectionFactory
import dev.mooring.cmap.EstablishableConnection
import dev.mooring.events.ServerAddress
import org.bson.BsonDocument
import java.util.concurrent.atomic.AtomicInteger

/**
 * Connections that establish at once and never do I/O, for the pool-only benchmark. [created]
 * counts establishments (the official pool's fake counts opens the same way).
 */
internal class BenchFakeConnectionFactory : ConnectionFactory {
    val created = AtomicInteger()

    override fun create(address: ServerAddress, id: Long, generation: Int): EstablishableConnection =
        BenchFakeConnection(address, id, generation, created)
}

internal class BenchFakeConnection(
    override val address: ServerAddress,
    override val id: Long,
    override val generation: Int,
    private val established: AtomicInteger,
) : EstablishableConnection {
    @Volatile private var closed = false
    @Volatile private var desc: ConnectionDescription? = null

    override val description: ConnectionDescription? get() = desc
    override val isClosed: Boolean get() = closed

    override suspend fun establish() {
        established.incrementAndGet()
        desc = ConnectionDescription(
            address, BsonDocument(), 0, 21, ConnectionDescription.DEFAULT_MAX_BSON_OBJECT_SIZE,
            ConnectionDescription.DEFAULT_MAX_MESSAGE_SIZE_BYTES, ConnectionDescription.DEFAULT_MAX_WRITE_BATCH_SIZE,
            id, null, true, null,
        )
    }

    override suspend fun command(database: String, command: BsonDocument): BsonDocument =
        throw UnsupportedOperationException("fake connection: no I/O in the pool-only benchmark")

    override fun close() {
        closed = true
    }
}
