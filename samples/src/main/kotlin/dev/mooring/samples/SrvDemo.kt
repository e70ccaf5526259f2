package dev.mooring.samples

import dev.mooring.events.MooringException
import dev.mooring.sdam.DnsResolverSettings
import dev.mooring.sdam.MongoCluster
import kotlinx.coroutines.runBlocking
import org.bson.BsonDocument
import org.bson.BsonInt32
import kotlin.system.exitProcess

/**
 * Connects with a `mongodb+srv://` URI, prints the seed list the DNS lookup gave and the
 * discovered topology, and runs `ping`.
 *
 * ```
 * SrvDemo 'mongodb+srv://cluster0.example.com/?tls=false' [--dns 127.0.0.1:5353]
 * ```
 *
 * `--dns host:port` sends the SRV/TXT queries, and the A/AAAA lookups of the servers' names, to
 * that DNS server (for example the test kit's `DnsTestServer`) instead of the system's resolver.
 */
fun main(args: Array<String>) {
    val uri = args.firstOrNull { !it.startsWith("--") && args.indexOf(it).let { i -> i == 0 || args[i - 1] != "--dns" } }
    if (uri == null) {
        System.err.println("usage: SrvDemo <mongodb+srv URI> [--dns host:port]")
        exitProcess(2)
    }
    val dnsIndex = args.indexOf("--dns")
    val dns = if (dnsIndex >= 0 && dnsIndex + 1 < args.size) DnsResolverSettings.of(args[dnsIndex + 1]) else DnsResolverSettings.SYSTEM
    val cluster = try {
        MongoCluster(uri, dns)
    } catch (e: MooringException) {
        System.err.println("could not create the cluster: ${e.message}")
        exitProcess(1)
    }
    cluster.use {
        println("seed list from DNS: ${cluster.settings.hosts.joinToString()}")
        runBlocking {
            val reply = cluster.runCommand("admin", BsonDocument("ping", BsonInt32(1)))
            println("ping: $reply")
            val topology = cluster.topology.value
            println("topology: ${topology.type.specName}, servers: ${topology.servers.values.joinToString { "${it.address} (${it.type})" }}")
        }
    }
}
