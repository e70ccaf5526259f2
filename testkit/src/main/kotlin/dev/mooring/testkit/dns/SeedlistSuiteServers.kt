package dev.mooring.testkit.dns

import dev.mooring.testkit.server.DefaultHello
import dev.mooring.testkit.server.ServerTlsConfig
import dev.mooring.testkit.server.WireServer
import org.bson.BsonArray
import org.bson.BsonBoolean
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonObjectId
import org.bson.BsonString
import org.bson.types.ObjectId
import java.io.IOException
import java.net.InetSocketAddress
import java.net.ServerSocket

/**
 * The deployments the initial-dns-seedlist-discovery README asks for, as test-kit wire servers
 * on the README's fixed loopback ports: a three-member replica set `repl0` whose members call
 * themselves `localhost:27017..27019` (27017 primary), two mongos on 27017 and 27018, or one
 * load balancer in front of a mongos on 8000. The servers answer hello (legacy too) and the
 * WireServer built-ins (`ping`, ...); their hello replies are static (no elections here: the
 * suite only discovers and pings). With `tls` every server terminates TLS with that config
 * (the README starts the deployments "with SSL enabled").
 *
 * Thread-safe; [close] stops every server and is idempotent.
 */
class SeedlistSuiteServers private constructor(
    /** The running servers, in port order. */
    val servers: List<WireServer>,
) : AutoCloseable {
    override fun close() {
        servers.forEach { it.close() }
    }

    companion object {
        /** The replica set's ports. */
        val REPLICA_SET_PORTS: List<Int> = listOf(27017, 27018, 27019)

        /** The mongos ports of the sharded tests. */
        val MONGOS_PORTS: List<Int> = listOf(27017, 27018)

        /** The load balancer's port (the README's HAProxy). */
        const val LOAD_BALANCER_PORT: Int = 8000

        /** The ports of [ports] that cannot be bound on 127.0.0.1 right now (in use). */
        fun busyPorts(ports: List<Int>): List<Int> = ports.filter { p ->
            try {
                ServerSocket().use { it.bind(InetSocketAddress("127.0.0.1", p)) }
                false
            } catch (e: IOException) {
                true
            }
        }

        /** The replica set [setName] on [ports] (the first one primary), members named `localhost:<port>`. */
        suspend fun replicaSet(setName: String = "repl0", ports: List<Int> = REPLICA_SET_PORTS, tls: ServerTlsConfig? = null): SeedlistSuiteServers {
            val hosts = ports.map { "localhost:$it" }
            val electionId = ObjectId("7fffffff0000000000000001")
            return startAll(ports, tls) { server, i ->
                server.hello = { ctx, request ->
                    DefaultHello.standalone(ctx, request).apply {
                        val primary = i == 0
                        val legacy = ctx.commandName != "hello"
                        put(if (legacy) "ismaster" else "isWritablePrimary", BsonBoolean(primary))
                        put("secondary", BsonBoolean(!primary))
                        put("setName", BsonString(setName))
                        put("setVersion", BsonInt32(1))
                        put("hosts", BsonArray(hosts.map { BsonString(it) }))
                        put("primary", BsonString(hosts[0]))
                        put("me", BsonString(hosts[i]))
                        if (primary) put("electionId", BsonObjectId(electionId))
                    }
                }
            }
        }

        /** One mongos on each of [ports]. */
        suspend fun mongoses(ports: List<Int> = MONGOS_PORTS, tls: ServerTlsConfig? = null): SeedlistSuiteServers = startAll(ports, tls) { server, _ ->
            server.hello = { ctx, request -> DefaultHello.standalone(ctx, request).apply { put("msg", BsonString("isdbgrid")) } }
        }

        /** A load balancer (a mongos answering with a serviceId) on [port]. */
        suspend fun loadBalancer(port: Int = LOAD_BALANCER_PORT, tls: ServerTlsConfig? = null): SeedlistSuiteServers {
            val serviceId = ObjectId()
            return startAll(listOf(port), tls) { server, _ ->
                server.hello = { ctx, request ->
                    DefaultHello.standalone(ctx, request).apply {
                        put("msg", BsonString("isdbgrid"))
                        put("serviceId", BsonObjectId(serviceId))
                    }
                }
            }
        }

        private suspend fun startAll(ports: List<Int>, tls: ServerTlsConfig?, configure: (WireServer, Int) -> Unit): SeedlistSuiteServers {
            val started = ArrayList<WireServer>()
            try {
                ports.forEachIndexed { i, p -> started += WireServer.start(port = p, tls = tls).also { configure(it, i) } }
            } catch (t: Throwable) {
                started.forEach { it.close() }
                throw t
            }
            return SeedlistSuiteServers(started)
        }
    }
}
