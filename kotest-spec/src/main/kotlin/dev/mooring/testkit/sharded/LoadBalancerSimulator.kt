package dev.mooring.testkit.sharded

import dev.mooring.testkit.server.WireServer
import org.bson.BsonDocument
import org.bson.types.ObjectId

/**
 * A load balancer in front of mongos routers, as a driver sees it (load-balancers.md): one
 * address ([server]); each connection lands on one backend, round-robin by connection number,
 * and a hello with `loadBalanced: true` is answered with that backend's `serviceId`
 * ([MongosHello.behindLoadBalancer]). The backends share the load balancer's built-in commands,
 * in-memory collections and fail point; a cursor belongs to the backend that opened it (a
 * getMore or killCursors arriving on another backend's connection is CursorNotFound).
 *
 * Thread-safe; [close] is idempotent.
 */
class LoadBalancerSimulator private constructor(
    /** The load balancer's listening server. */
    val server: WireServer,
    /** The serviceId of each backend router. */
    val serviceIds: List<ObjectId>,
) : AutoCloseable {
    /** The connection string for the load balancer with `loadBalanced=true` unless [options] sets it, then [options]. */
    fun seedUri(options: String = ""): String {
        val all = if (options.contains("loadBalanced=", ignoreCase = true)) options else listOf("loadBalanced=true", options).filter { it.isNotEmpty() }.joinToString("&")
        return "mongodb://${server.address}/?$all"
    }

    /** Sets the failCommand fail point (it applies whichever backend a connection lands on). */
    fun configureFailPoint(command: BsonDocument) = server.configureFailPoint(command)

    override fun close() = server.close()

    companion object {
        /** Starts a load balancer with [backends] routers behind it (at least 1). */
        suspend fun start(backends: Int = 1): LoadBalancerSimulator {
            require(backends >= 1) { "a load balancer needs at least one backend, got $backends" }
            val ids = List(backends) { ObjectId() }
            val server = WireServer.start()
            server.hello = { ctx, cmd -> MongosHello.behindLoadBalancer(ctx, cmd, ids[(ctx.connectionNumber - 1) % ids.size]) }
            // a cursor lives on the backend whose connection opened it: a getMore must come over that connection's backend
            server.cursorOwner = { ctx -> (ctx.connectionNumber - 1) % ids.size }
            return LoadBalancerSimulator(server, ids)
        }
    }
}
