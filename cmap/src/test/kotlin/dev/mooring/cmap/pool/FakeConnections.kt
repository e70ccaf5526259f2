package dev.mooring.cmap.pool

import dev.mooring.cmap.ConnectionDescription
import dev.mooring.cmap.ConnectionFactory
import dev.mooring.cmap.EstablishableConnection
import dev.mooring.cmap.MongoNetworkException
import dev.mooring.events.ServerAddress
import kotlinx.coroutines.CompletableDeferred
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.types.ObjectId
import java.util.concurrent.ConcurrentLinkedQueue
import java.util.concurrent.atomic.AtomicInteger

val TEST_ADDRESS = ServerAddress("db.example", 27017)

/**
 * Fake connections for pool tests: no I/O. [establishGate], when set, makes establish() wait
 * for it; [establishError] makes establish() fail; [serviceId] gives every connection a
 * load-balancer serviceId; [commandGate] makes command() wait (to simulate an operation in flight).
 */
class FakeConnectionFactory : ConnectionFactory {
    @Volatile var establishGate: CompletableDeferred<Unit>? = null
    @Volatile var establishError: (() -> Throwable)? = null
    @Volatile var serviceId: ObjectId? = null
    @Volatile var commandGate: CompletableDeferred<Unit>? = null
    /** When set, [establishError] is thrown after the hello completed (as during authentication). */
    @Volatile var failAfterHello: Boolean = false
    val created = ConcurrentLinkedQueue<FakeConnection>()
    val establishStarted = AtomicInteger()

    override fun create(address: ServerAddress, id: Long, generation: Int): EstablishableConnection =
        FakeConnection(this, address, id, generation).also { created.add(it) }
}

class FakeConnection(
    private val factory: FakeConnectionFactory,
    override val address: ServerAddress,
    override val id: Long,
    override val generation: Int,
) : EstablishableConnection {
    @Volatile private var closed = false
    @Volatile private var desc: ConnectionDescription? = null

    override val description: ConnectionDescription? get() = desc
    override val isClosed: Boolean get() = closed

    override suspend fun establish() {
        factory.establishStarted.incrementAndGet()
        try {
            factory.establishGate?.await()
            if (factory.failAfterHello) desc = describe()
            factory.establishError?.let { throw it() }
        } catch (t: Throwable) {
            closed = true
            throw t
        }
        desc = describe()
    }

    private fun describe() = ConnectionDescription(
            address, BsonDocument(), 0, 21, ConnectionDescription.DEFAULT_MAX_BSON_OBJECT_SIZE,
            ConnectionDescription.DEFAULT_MAX_MESSAGE_SIZE_BYTES, ConnectionDescription.DEFAULT_MAX_WRITE_BATCH_SIZE,
            id, factory.serviceId, true, null,
        )

    override suspend fun command(database: String, command: BsonDocument): BsonDocument {
        if (closed) throw MongoNetworkException("connection $id is closed", address, generation)
        factory.commandGate?.let { gate ->
            // Simulates a reply that only arrives when the gate opens, or a socket closed under us.
            while (!gate.isCompleted) {
                if (closed) throw MongoNetworkException("connection $id was closed while reading", address, generation)
                kotlinx.coroutines.delay(1)
            }
        }
        if (closed) throw MongoNetworkException("connection $id is closed", address, generation)
        return BsonDocument("ok", BsonInt32(1))
    }

    override fun close() {
        closed = true
    }
}
