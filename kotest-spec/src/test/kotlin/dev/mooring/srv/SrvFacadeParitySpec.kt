package dev.mooring.srv

import dev.mooring.java.MongoClusters
import dev.mooring.sdam.DnsResolverSettings
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.testkit.dns.DnsTestServer
import dev.mooring.testkit.dns.DnsZone
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe

private const val PARITY_DOMAIN = "test.build.10gen.cc"

/**
 * initial-dns-seedlist-discovery.md: options stated in a `mongodb+srv` URI override the TXT
 * record's (`authSource`, `replicaSet`, `loadBalanced`), and the Kotlin constructor
 * `MongoCluster(uri, dns)` and the Java facade's `MongoClusters.create(uri, dns)` apply that one
 * rule through one code path: equal settings for the same URI and records. The SRV targets are
 * loopback ports nobody needs to answer (only the settings are compared).
 */
class SrvFacadeParitySpec : FunSpec({
    val zone = DnsZone()
    val dns = DnsTestServer.start(zone)
    val resolver = DnsResolverSettings(dns.address, timeoutMS = 2_000)
    afterSpec { dns.close() }
    beforeTest {
        zone.records().map { it.name.toString() }.distinct().forEach { zone.remove(it) }
        zone.addA("localhost.$PARITY_DOMAIN", "127.0.0.1")
    }

    /** The settings without the per-cluster DNS host-name resolver (an instance per lookup). */
    fun MongoClusterSettings.comparable() = copy(connection = connection.copy(hostNameResolver = null))

    /** The settings the Kotlin and the Java entry points resolve for [uri]; asserts they are equal. */
    fun bothResolve(uri: String): MongoClusterSettings {
        val kotlin = MongoCluster(uri, resolver)
        val java = MongoClusters.create(uri, resolver)
        try {
            java.settings().comparable() shouldBe kotlin.settings.comparable()
            return kotlin.settings
        } finally {
            kotlin.close()
            java.close()
        }
    }

    fun records(name: String, txt: String) {
        zone.addSrv("_mongodb._tcp.$name.$PARITY_DOMAIN", "localhost.$PARITY_DOMAIN", 1)
        zone.addTxt("$name.$PARITY_DOMAIN", txt)
    }

    test("an authSource the URI states (even the default, admin) wins over the TXT record's; the TXT replicaSet applies") {
        records("auth", "authSource=txtdb&replicaSet=rs9")
        val s = bothResolve("mongodb+srv://user:pass@auth.$PARITY_DOMAIN/?authSource=admin&tls=false")
        s.connection.credential!!.source shouldBe "admin"
        s.replicaSet shouldBe "rs9"
    }

    test("without a URI authSource the TXT record's applies") {
        records("txtauth", "authSource=txtdb")
        bothResolve("mongodb+srv://user:pass@txtauth.$PARITY_DOMAIN/?tls=false").connection.credential!!.source shouldBe "txtdb"
    }

    test("loadBalanced=false stated in the URI wins over the TXT record's loadBalanced=true") {
        records("lb", "loadBalanced=true")
        bothResolve("mongodb+srv://lb.$PARITY_DOMAIN/?loadBalanced=false&tls=false").loadBalanced shouldBe false
    }

    test("a TXT loadBalanced=true applies when the URI does not state it") {
        records("lbtxt", "loadBalanced=true")
        bothResolve("mongodb+srv://lbtxt.$PARITY_DOMAIN/?tls=false").loadBalanced shouldBe true
    }
})
