package dev.mooring.loadbalanced

import dev.mooring.cmap.ConnectionPool
import dev.mooring.cmap.ConnectionPoolSettings
import dev.mooring.cmap.ConnectionPurpose
import dev.mooring.cmap.ConnectionSettings
import dev.mooring.cmap.DefaultConnectionFactory
import dev.mooring.cmap.MongoHandshakeException
import dev.mooring.cmap.WaitQueueTimeoutException
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.testkit.sharded.LoadBalancerSimulator
import dev.mooring.testkit.server.WireServer
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.throwable.shouldHaveMessage
import org.bson.BsonDocument
import org.bson.BsonInt32
import kotlin.time.Duration.Companion.seconds

/**
 * Every error text load-balancers.md gives appears verbatim in Mooring's error message (any
 * context only before or after it): the handshake without `serviceId`, and the wait-queue
 * timeout's detailed message with its connection tracking counts.
 */
class LoadBalancedErrorTextSpec : FunSpec({
    timeout = 60.seconds.inWholeMilliseconds
    val noServiceId = "Driver attempted to initialize in load balancing mode, but the server does not support this mode."

    test("a load-balanced handshake whose reply has no serviceId fails with the spec's text, verbatim") {
        WireServer.start().use { server ->
            val cluster = MongoCluster(MongoClusterSettings.fromUri("mongodb://${server.address}/?loadBalanced=true"))
            try {
                val e = shouldThrow<MongoHandshakeException> { cluster.runCommand("admin", BsonDocument("ping", BsonInt32(1))) }
                e.message!! shouldContain noServiceId
            } finally {
                cluster.closeSuspending()
            }
        }
    }

    suspend fun withLoadBalancedPool(block: suspend (ConnectionPool) -> Unit) {
        val lb = LoadBalancerSimulator.start(1)
        val factory = DefaultConnectionFactory(ConnectionSettings(connectTimeoutMS = 5_000, loadBalanced = true))
        val pool = ConnectionPool(lb.server.address, ConnectionPoolSettings(maxPoolSize = 2, waitQueueTimeoutMS = 200), factory, loadBalanced = true)
        try {
            pool.ready()
            block(pool)
        } finally {
            pool.close()
            factory.close()
            lb.close()
        }
    }

    fun tracking(cursors: Int, transactions: Int, others: Int) =
        "Timeout waiting for connection from the connection pool. maxPoolSize: 2, connections in use by cursors: $cursors, " +
            "connections in use by transactions: $transactions, connections in use by other operations: $others"

    test("a load-balanced wait-queue timeout carries the detailed message with the count per purpose") {
        withLoadBalancedPool { pool ->
            val a = pool.checkOut()
            val b = pool.checkOut()
            shouldThrow<WaitQueueTimeoutException> { pool.checkOut() }.message!! shouldContain tracking(0, 0, 2)
            pool.pin(a, ConnectionPurpose.CURSOR)
            pool.pin(b, ConnectionPurpose.TRANSACTION)
            shouldThrow<WaitQueueTimeoutException> { pool.checkOut() }.message!! shouldContain tracking(1, 1, 0)
            pool.pin(b, ConnectionPurpose.OPERATION)
            shouldThrow<WaitQueueTimeoutException> { pool.checkOut() }.message!! shouldContain tracking(1, 0, 1)
            // a check-in ends the pin: the connection counts for nothing until it is checked out again
            pool.checkIn(a)
            val c = pool.checkOut()
            shouldThrow<WaitQueueTimeoutException> { pool.checkOut() }.message!! shouldContain tracking(0, 0, 2)
            pool.checkIn(b)
            pool.checkIn(c)
        }
    }

    test("outside load-balanced mode the wait-queue timeout keeps the CMAP message") {
        WireServer.start().use { server ->
            val factory = DefaultConnectionFactory(ConnectionSettings(connectTimeoutMS = 5_000))
            val pool = ConnectionPool(server.address, ConnectionPoolSettings(maxPoolSize = 1, waitQueueTimeoutMS = 200), factory)
            try {
                pool.ready()
                val a = pool.checkOut()
                shouldThrow<WaitQueueTimeoutException> { pool.checkOut() } shouldHaveMessage WaitQueueTimeoutException.MESSAGE
                pool.checkIn(a)
            } finally {
                pool.close()
                factory.close()
            }
        }
    }
})
