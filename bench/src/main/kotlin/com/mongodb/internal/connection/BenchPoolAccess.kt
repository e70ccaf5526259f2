// Lives in the official driver's package because DefaultConnectionPool is package-private.
// Bench scope only: the official driver is pinned to 5.6.x for this reason.
package com.mongodb.internal.connection

import com.mongodb.ServerAddress
import com.mongodb.connection.ClusterId
import com.mongodb.connection.ConnectionDescription
import com.mongodb.connection.ServerDescription
import com.mongodb.connection.ServerId
import com.mongodb.internal.TimeoutSettings
import com.mongodb.internal.async.SingleResultCallback
import com.mongodb.internal.inject.OptionalProvider
import org.bson.ByteBuf
import org.bson.ByteBufNIO
import org.bson.codecs.Decoder
import java.nio.ByteBuffer
import java.util.Optional
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger

/**
 * Builds the official driver's `DefaultConnectionPool` over fake connections that do no I/O,
 * for the pool-only benchmark. Checkout is `get(operationContext)` / `getAsync`, check-in is
 * `close()` on the pooled connection.
 */
object BenchPoolAccess {
    private const val WAIT_MS = 600_000L // effectively unbounded for a benchmark

    /** The pool's timeout settings: waits of up to ten minutes, no timeoutMS. */
    val timeoutSettings: TimeoutSettings = TimeoutSettings(30_000, 10_000, 0, null, WAIT_MS)

    /** A context per caller (reused for that caller's checkouts, which favours the official pool slightly). */
    fun operationContext(): OperationContext = OperationContext.simpleOperationContext(timeoutSettings, null)

    /**
     * A ready pool of at most [maxPoolSize] fake connections. [created] counts connections
     * *opened* (what a real connection's socket would be): the pool may create a connection
     * object, then hand the checkout an idle one that came back meanwhile and discard the
     * unopened object, which is not a connection to the server.
     */
    fun pool(maxPoolSize: Int, created: AtomicInteger, closedByPool: AtomicInteger = AtomicInteger()): BenchPool {
        val serverId = ServerId(ClusterId("bench"), ServerAddress("127.0.0.1", 27017))
        val settings = com.mongodb.connection.ConnectionPoolSettings.builder()
            .maxSize(maxPoolSize)
            .minSize(0)
            .maxWaitTime(WAIT_MS, TimeUnit.MILLISECONDS)
            .build()
        val factory = object : InternalConnectionFactory {
            override fun create(serverId: ServerId, connectionGenerationSupplier: ConnectionGenerationSupplier): InternalConnection {
                return FakeInternalConnection(serverId, connectionGenerationSupplier.generation, closedByPool, created)
            }
        }
        val none = OptionalProvider<SdamServerDescriptionManager> { Optional.empty() }
        val pool = DefaultConnectionPool(serverId, factory, settings, none, InternalOperationContextFactory(timeoutSettings, null))
        pool.ready()
        return BenchPool(pool)
    }

    /** The public face of the package-private pool: checkout is [get]/[getAsync], check-in is closing the connection. */
    class BenchPool internal constructor(private val pool: ConnectionPool) : AutoCloseable {
        fun get(operationContext: OperationContext): InternalConnection = pool.get(operationContext)
        fun getAsync(operationContext: OperationContext, callback: (InternalConnection?, Throwable?) -> Unit) =
            pool.getAsync(operationContext) { c, t -> callback(c, t) }
        override fun close() = pool.close()
    }

    /** A connection that opens at once and fails every I/O call (the pool never sends anything). */
    private class FakeInternalConnection(serverId: ServerId, private val generation: Int, private val closedCount: AtomicInteger, private val openedCount: AtomicInteger) : InternalConnection {
        private val description = ConnectionDescription(serverId)
        @Volatile private var opened = false
        @Volatile private var closed = false

        override fun getDescription(): ConnectionDescription = description
        override fun getInitialServerDescription(): ServerDescription =
            ServerDescription.builder().address(description.serverAddress).state(com.mongodb.connection.ServerConnectionState.CONNECTED).build()
        override fun open(operationContext: OperationContext) {
            openedCount.incrementAndGet()
            opened = true
        }
        override fun openAsync(operationContext: OperationContext, callback: SingleResultCallback<Void>) {
            openedCount.incrementAndGet()
            opened = true
            callback.onResult(null, null)
        }
        override fun close() {
            if (!closed && closedCount.getAndIncrement() == 0 && System.getProperty("bench.traceClose") != null) {
                Exception("first fake connection closed by the official pool").printStackTrace()
            }
            closed = true
        }
        override fun opened(): Boolean = opened
        override fun isClosed(): Boolean = closed
        override fun getGeneration(): Int = generation
        override fun getBuffer(size: Int): ByteBuf = ByteBufNIO(ByteBuffer.allocate(size))

        private fun noIo(): Nothing = throw UnsupportedOperationException("fake connection: no I/O in the pool-only benchmark")
        override fun <T : Any?> sendAndReceive(message: CommandMessage, decoder: Decoder<T>, operationContext: OperationContext): T = noIo()
        override fun <T : Any?> send(message: CommandMessage, decoder: Decoder<T>, operationContext: OperationContext) = noIo()
        override fun <T : Any?> receive(decoder: Decoder<T>, operationContext: OperationContext): T = noIo()
        override fun hasMoreToCome(): Boolean = false
        override fun <T : Any?> sendAndReceiveAsync(message: CommandMessage, decoder: Decoder<T>, operationContext: OperationContext, callback: SingleResultCallback<T>) = noIo()
        override fun sendMessage(byteBuffers: MutableList<ByteBuf>, lastRequestId: Int, operationContext: OperationContext) = noIo()
        override fun receiveMessage(responseTo: Int, operationContext: OperationContext): ResponseBuffers = noIo()
        override fun sendMessageAsync(byteBuffers: MutableList<ByteBuf>, lastRequestId: Int, operationContext: OperationContext, callback: SingleResultCallback<Void>) = noIo()
        override fun receiveMessageAsync(responseTo: Int, operationContext: OperationContext, callback: SingleResultCallback<ResponseBuffers>) = noIo()
    }
}
