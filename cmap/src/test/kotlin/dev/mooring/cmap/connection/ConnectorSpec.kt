package dev.mooring.cmap.connection

import dev.mooring.cmap.HostNameResolver
import dev.mooring.cmap.internal.connection.Connector
import dev.mooring.events.ServerAddress
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.ktor.network.selector.SelectorManager
import kotlinx.coroutines.Dispatchers
import java.net.InetAddress
import java.net.ServerSocket
import java.util.concurrent.atomic.AtomicInteger

/** Which hosts are IP literals (parsed in place, never resolved) and which go to the resolver. */
class ConnectorSpec : FunSpec({
    test("dotted quads with octets up to 255 and anything with a colon are literals; names and malformed quads are not") {
        listOf("127.0.0.1", "0.0.0.0", "255.255.255.255", "::1", "fe80::1%lo", "2001:db8::7").forEach {
            Connector.isIpLiteral(it) shouldBe true
        }
        listOf("localhost", "256.0.0.1", "1.2.3", "1.2.3.4.5", "example.com", "1.2.3.04x", "").forEach {
            Connector.isIpLiteral(it) shouldBe false
        }
    }

    test("a literal address connects without asking the resolver; a name is resolved by it") {
        val selector = SelectorManager(Dispatchers.IO)
        ServerSocket(0, 4, InetAddress.getLoopbackAddress()).use { server ->
            val asked = AtomicInteger()
            val resolver = HostNameResolver { asked.incrementAndGet(); listOf(InetAddress.getLoopbackAddress()) }
            Connector.connect(selector, ServerAddress("127.0.0.1", server.localPort), resolver).close()
            asked.get() shouldBe 0
            Connector.connect(selector, ServerAddress("mooring.invalid", server.localPort), resolver).close()
            asked.get() shouldBe 1
        }
        selector.close()
    }
})
