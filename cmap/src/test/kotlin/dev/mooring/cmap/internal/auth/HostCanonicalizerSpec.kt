package dev.mooring.cmap.internal.auth

import dev.mooring.cmap.internal.auth.gssapi.Canonicalization
import dev.mooring.cmap.internal.auth.gssapi.HostCanonicalizer
import dev.mooring.cmap.internal.auth.gssapi.HostLookups
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import java.net.InetAddress
import java.net.UnknownHostException

/** auth.md "Hostname Canonicalization": the algorithm over scripted DNS answers. */
class HostCanonicalizerSpec : FunSpec({
    val address = InetAddress.getByAddress("db1.example.com", byteArrayOf(10, 0, 0, 7))

    class Zone(
        val addresses: Map<String, List<InetAddress>> = emptyMap(),
        val cnames: Map<String, String> = emptyMap(),
        val ptr: Map<InetAddress, String> = emptyMap(),
        val failing: Boolean = false,
    ) : HostLookups {
        val asked = mutableListOf<String>()
        override fun addresses(host: String): List<InetAddress> {
            asked += "A $host"
            if (failing) throw UnknownHostException(host)
            return addresses[host].orEmpty()
        }
        override fun cname(host: String): String? {
            asked += "CNAME $host"
            if (failing) throw javax.naming.NamingException("no DNS")
            return cnames[host]
        }
        override fun reverse(address: InetAddress): String? {
            asked += "PTR ${address.hostAddress}"
            return ptr[address]
        }
    }

    val zone = Zone(
        addresses = mapOf("mongo.example.com" to listOf(address)),
        cnames = mapOf("mongo.example.com" to "Alias.Example.COM", "Alias.Example.COM" to "Real-DB.Example.com"),
        ptr = mapOf(address to "DB1.Internal.Example.com"),
    )

    test("none (and false, and absent) leaves the host as given and looks nothing up") {
        for (v in listOf(null, false, "false", "none")) {
            val z = Zone()
            HostCanonicalizer(z).canonicalize("Mongo.Example.com", Canonicalization.of(v)) shouldBe "Mongo.Example.com"
            z.asked shouldBe emptyList()
        }
    }

    test("forward follows the CNAME chain to its end and lower-cases the name") {
        HostCanonicalizer(zone).canonicalize("mongo.example.com", Canonicalization.FORWARD) shouldBe "real-db.example.com"
    }

    test("forwardAndReverse (and true) use the reverse name of the first address") {
        for (v in listOf("forwardAndReverse", true, "true")) {
            HostCanonicalizer(zone).canonicalize("mongo.example.com", Canonicalization.of(v)) shouldBe "db1.internal.example.com"
        }
    }

    test("lookups that fail or find nothing fall back to the given host (or the forward name)") {
        HostCanonicalizer(Zone(failing = true)).canonicalize("mongo.example.com", Canonicalization.FORWARD_AND_REVERSE) shouldBe "mongo.example.com"
        HostCanonicalizer(Zone()).canonicalize("nowhere.example.com", Canonicalization.FORWARD) shouldBe "nowhere.example.com"
        val noPtr = Zone(addresses = zone.addresses, cnames = zone.cnames)
        HostCanonicalizer(noPtr).canonicalize("mongo.example.com", Canonicalization.FORWARD_AND_REVERSE) shouldBe "real-db.example.com"
    }

    test("a CNAME loop ends") {
        val loop = Zone(addresses = mapOf("a.example.com" to listOf(address)), cnames = mapOf("a.example.com" to "b.example.com", "b.example.com" to "a.example.com"))
        HostCanonicalizer(loop).canonicalize("a.example.com", Canonicalization.FORWARD) shouldBe "a.example.com"
    }

    test("other values are refused") {
        shouldThrow<IllegalArgumentException> { Canonicalization.of("sometimes") }.message!!.contains("CANONICALIZE_HOST_NAME") shouldBe true
    }
})
