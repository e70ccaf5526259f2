package dev.mooring.spec.cmap

import dev.mooring.cmap.ConnectionDescription
import dev.mooring.cmap.ConnectionFactory
import dev.mooring.cmap.EstablishableConnection
import dev.mooring.cmap.MongoNetworkException
import dev.mooring.events.ServerAddress
import org.bson.BsonDocument
import org.bson.BsonInt32

/** The CMAP unit-test mock: a connection that performs no I/O and answers every command with `ok: 1`. */
class MockConnectionFactory : ConnectionFactory {
    override fun create(address: ServerAddress, id: Long, generation: Int): EstablishableConnection =
        MockConnection(address, id, generation)
}

class MockConnection(
    override val address: ServerAddress,
    override val id: Long,
    override val generation: Int,
) : EstablishableConnection {
    @Volatile private var closed = false
    @Volatile private var established = false

    override val description: ConnectionDescription? get() = null
    override val isClosed: Boolean get() = closed

    override suspend fun establish() {
        if (closed) throw MongoNetworkException("connection $id is closed", address, generation, false)
        established = true
    }

    override suspend fun command(database: String, command: BsonDocument): BsonDocument {
        if (closed || !established) throw MongoNetworkException("connection $id is closed", address, generation)
        return BsonDocument("ok", BsonInt32(1))
    }

    override fun close() {
        closed = true
    }
}
