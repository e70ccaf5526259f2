package dev.mooring.testkit

import dev.mooring.events.ServerAddress
import dev.mooring.testkit.wire.ClientMessage
import dev.mooring.testkit.wire.ServerWireCodec
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.withContext
import org.bson.BsonDocument
import org.bson.BsonString
import java.io.DataInputStream
import java.net.InetSocketAddress
import java.net.Socket

/**
 * The test kit's own test client: one OP_MSG command on a fresh blocking socket, its reply
 * returned as it came (an `ok: 0` reply too). Built on the kit's [ServerWireCodec] (OP_MSG is
 * the same both ways), so the kit's tests need no driver. Stateless; thread-safe.
 */
internal object WireClient {
    /** Runs [command] on [database] of the server at [address] and returns its reply. */
    suspend fun run(address: ServerAddress, command: BsonDocument, database: String = "admin"): BsonDocument = withContext(Dispatchers.IO) {
        Socket().use { socket ->
            socket.connect(InetSocketAddress(address.host, address.port), 5_000)
            socket.soTimeout = 10_000
            val requestId = ServerWireCodec.nextRequestId()
            val body = command.clone().append("\$db", BsonString(database))
            socket.getOutputStream().apply { write(ServerWireCodec.encodeMsg(requestId, 0, 0, body)); flush() }
            val input = DataInputStream(socket.getInputStream())
            val header = ByteArray(16).also { input.readFully(it) }
            val message = header + ByteArray(ServerWireCodec.messageLength(header) - 16).also { input.readFully(it) }
            val reply = ServerWireCodec.decode(message)
            check(reply is ClientMessage.Msg) { "expected an OP_MSG reply, got $reply" }
            reply.command
        }
    }

    fun hello(): BsonDocument = BsonDocument("hello", org.bson.BsonInt32(1))
}
