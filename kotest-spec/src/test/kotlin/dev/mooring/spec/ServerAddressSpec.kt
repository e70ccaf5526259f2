package dev.mooring.spec

import dev.mooring.events.InvalidServerAddressException
import dev.mooring.events.ServerAddress
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe

class ServerAddressSpec : FunSpec({
    test("host names are lower-cased and the port defaults to 27017") {
        val a = ServerAddress.parse("Example.COM")
        a.host shouldBe "example.com"
        a.port shouldBe 27017
        a.toString() shouldBe "example.com:27017"
    }
    test("IPv6 literals keep their brackets when formatted and round-trip") {
        val a = ServerAddress.parse("[::1]:27018")
        a.host shouldBe "::1"
        a.isIpv6Literal shouldBe true
        ServerAddress.parse(a.toString()) shouldBe a
        ServerAddress("[FE80::1]").toString() shouldBe "[fe80::1]:27017"
    }
    test("Unix domain socket paths") {
        val a = ServerAddress.parse("/tmp/mongodb-27017.sock")
        a.isUnixSocket shouldBe true
        a.toString() shouldBe "/tmp/mongodb-27017.sock"
    }
    test("invalid addresses fail with a typed error") {
        for (bad in listOf("", "host:", "host:0", "host:65536", "host:abc", "::1", "[::1", "[::1]x", "a:1:2")) {
            shouldThrow<InvalidServerAddressException> { ServerAddress.parse(bad) }
        }
    }
})
