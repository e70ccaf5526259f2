package dev.mooring.testkit.sharded

import dev.mooring.testkit.server.WireServer
import org.bson.BsonDocument
import org.bson.types.ObjectId

/**
 * A load balancer in front of mongos routers, as a driver sees it (load-balancers.md), in the
 * two forms drivers' test suites use: [server], in front of every backend (each connection lands
 * on one, round-robin by connection number), and [singleServer], in front of the first backend
 * only (the "single mongos" load balancer). A hello with `loadBalanced: true` is answered with
 * the backend's `serviceId` ([MongosHello.behindLoadBalancer]). Both share one set of in-memory
 * collections; a cursor belongs to the backend that opened it (a getMore or killCursors arriving
 * on another backend's connection is CursorNotFound). Each listening server has its own fail
 * point ([configureFailPoint] sets both).
 *
 * Thread-safe; [close] is idempotent.
 */
class LoadBalancerSimulator private constructor(
    /** The load balancer in front of every backend. */
    val server: WireServer,
    /** The load balancer in front of the first backend only. */
    val singleServer: WireServer,
    /** The serviceId of each backend router. */
    val serviceIds: List<ObjectId>,
) : AutoCloseable {
    /**
     * The connection string for the load balancer ([singleMongos]: the one in front of the first
     * backend only) with `loadBalanced=true` unless [options] sets it, then [options].
     */
    fun seedUri(options: String = "", singleMongos: Boolean = false): String {
        val all = if (options.contains("loadBalanced=", ignoreCase = true)) options else listOf("loadBalanced=true", options).filter { it.isNotEmpty() }.joinToString("&")
        return "mongodb://${(if (singleMongos) singleServer else server).address}/?$all"
    }

    /** Sets the failCommand fail point of both load balancers (it applies whichever backend a connection lands on). */
    fun configureFailPoint(command: BsonDocument) {
        server.configureFailPoint(command)
        singleServer.configureFailPoint(command)
    }

    override fun close() {
        server.close()
        singleServer.close()
    }

    companion object {
        /** Starts a load balancer with [backends] routers behind it (at least 1). */
        suspend fun start(backends: Int = 1): LoadBalancerSimulator {
            require(backends >= 1) { "a load balancer needs at least one backend, got $backends" }
            val ids = List(backends) { ObjectId() }
            val server = WireServer.start()
            val single = try {
                WireServer.start(collections = server.collections)
            } catch (e: Throwable) {
                server.close()
                throw e
            }
            server.hello = { ctx, cmd -> MongosHello.behindLoadBalancer(ctx, cmd, ids[(ctx.connectionNumber - 1) % ids.size]) }
            // a cursor lives on the backend whose connection opened it: a getMore must come over that connection's backend
            server.cursorOwner = { ctx -> (ctx.connectionNumber - 1) % ids.size }
            single.hello = { ctx, cmd -> MongosHello.behindLoadBalancer(ctx, cmd, ids[0]) }
            for (s in listOf(server, single)) s.handler = { ctx, db, cmd -> MongosCommands.answer(ctx, db, cmd) }
            return LoadBalancerSimulator(server, single, ids)
        }
    }
}
