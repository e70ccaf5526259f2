package dev.mooring.reliability

import dev.mooring.cmap.ConnectionDescription
import dev.mooring.cmap.ConnectionFactory
import dev.mooring.cmap.EstablishableConnection
import dev.mooring.cmap.MongoNetworkException
import dev.mooring.events.ServerAddress
import kotlinx.coroutines.yield
import org.bson.BsonDocument
import org.bson.BsonInt32
import java.util.concurrent.ConcurrentLinkedQueue
import java.util.concurrent.atomic.AtomicBoolean
import kotlin.random.Random

/**
 * Connections without I/O whose establishment and commands suspend for a random number of
 * yields (so cancellation can land inside them) and fail now and then. Every connection ever
 * created is kept in [created] so a test can account for all of them.
 */
class StormConnectionFactory(seed: Long, private val failPercent: Int) : ConnectionFactory {
    private val random = Random(seed)
    val created = ConcurrentLinkedQueue<StormConnection>()

    override fun create(address: ServerAddress, id: Long, generation: Int): EstablishableConnection {
        val (establishYields, fails) = synchronized(random) { random.nextInt(0, 8) to (random.nextInt(100) < failPercent) }
        return StormConnection(address, id, generation, establishYields, fails).also { created += it }
    }
}

class StormConnection(
    override val address: ServerAddress,
    override val id: Long,
    override val generation: Int,
    private val establishYields: Int,
    private val establishFails: Boolean,
) : EstablishableConnection {
    private val closed = AtomicBoolean(false)
    private val busy = AtomicBoolean(false)

    @Volatile var established: Boolean = false
        private set

    override val description: ConnectionDescription? get() = null
    override val isClosed: Boolean get() = closed.get()

    override suspend fun establish() {
        repeat(establishYields) { yield() }
        if (establishFails) throw MongoNetworkException("simulated establishment failure of connection $id", address, generation, false)
        if (closed.get()) throw MongoNetworkException("connection $id is closed", address, generation, false)
        established = true
    }

    override suspend fun command(database: String, command: BsonDocument): BsonDocument {
        check(established && !closed.get()) { "command on connection $id that is not established or closed" }
        check(busy.compareAndSet(false, true)) { "connection $id used by two callers at once" }
        try {
            repeat((id % 4).toInt()) { yield() }
            return BsonDocument("ok", BsonInt32(1))
        } finally {
            busy.set(false)
        }
    }

    override fun close() {
        closed.set(true)
    }
}
