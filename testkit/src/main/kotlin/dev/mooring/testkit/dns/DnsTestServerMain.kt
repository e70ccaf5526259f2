package dev.mooring.testkit.dns

import dev.mooring.testkit.SpecTests
import kotlinx.coroutines.runBlocking
import java.io.File

/**
 * Runs the test kit's DNS server with the zone of the initial-dns-seedlist-discovery README
 * (or `--zone FILE` in the same record layout), optionally with test-kit mongos on the
 * README's ports 27017/27018 (`--mongos`), until standard input closes. For trying a
 * `mongodb+srv://` URI by hand, e.g. with the demo:
 *
 * ```
 * DnsTestServerMain --mongos    # prints: DNS test server on 127.0.0.1:<port>
 * samples/demo 'mongodb+srv://test1.test.build.10gen.cc/?tls=false' --dns 127.0.0.1:<port>
 * ```
 */
fun main(args: Array<String>) {
    val zone = DnsZone()
    val zoneFile = args.indexOf("--zone").takeIf { it >= 0 }?.let { File(args[it + 1]) }
    val text = zoneFile?.readText() ?: ZoneText.dnsBlocks(File(SpecTests.root, "initial-dns-seedlist-discovery/README.md").readText())
    val records = ZoneText.load(zone, text)
    val port = args.indexOf("--port").takeIf { it >= 0 }?.let { args[it + 1].toInt() } ?: 0
    val mongos = if ("--mongos" in args) runBlocking { SeedlistSuiteServers.mongoses() } else null
    DnsTestServer.start(zone, port).use { dns ->
        println("DNS test server on ${dns.address} serving $records records" + (mongos?.let { " ; mongos on ${it.servers.map { s -> s.port }}" } ?: ""))
        System.out.flush()
        while (System.`in`.read() >= 0) Unit
    }
    mongos?.close()
}
