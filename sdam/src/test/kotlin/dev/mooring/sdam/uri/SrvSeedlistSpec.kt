package dev.mooring.sdam.uri

import dev.mooring.events.ServerAddress
import dev.mooring.sdam.ConnectionString
import dev.mooring.sdam.InvalidConnectionStringException
import dev.mooring.sdam.applySrvLookup
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldBeIn
import io.kotest.matchers.collections.shouldHaveSize
import io.kotest.matchers.shouldBe
import kotlin.random.Random

/** The URI-level seedlist rules of initial-dns-seedlist-discovery.md, with stubbed DNS answers. */
class SrvSeedlistSpec : FunSpec({
    val local = ServerAddress("localhost.test.build.10gen.cc", 27017)
    val local2 = ServerAddress("localhost.test.build.10gen.cc", 27018)

    test("SRV names with fewer than three labels parse (prose test 1)") {
        ConnectionString.parse("mongodb+srv://localhost").srvHost shouldBe "localhost"
        ConnectionString.parse("mongodb+srv://mongo.local").srvHost shouldBe "mongo.local"
    }

    test("targets must end with the SRV domain, have more labels and share it at a label boundary (prose tests 2-4)") {
        val bad = listOf(
            "mongodb+srv://localhost" to "localhost.mongodb",
            "mongodb+srv://mongo.local" to "test_1.evil.local",
            "mongodb+srv://blogs.mongodb.com" to "blogs.evil.com",
            "mongodb+srv://localhost" to "localhost",
            "mongodb+srv://mongo.local" to "mongo.local",
            "mongodb+srv://localhost" to "test_1.cluster_1localhost",
            "mongodb+srv://mongo.local" to "test_1.my_hostmongo.local",
            "mongodb+srv://blogs.mongodb.com" to "cluster.testmongodb.com",
            "mongodb+srv://test13.test.build.10gen.cc" to "test.build.10gen.cc",
            "mongodb+srv://test12.test.build.10gen.cc" to "localhost.build.10gen.cc",
        )
        for ((uri, target) in bad) {
            shouldThrow<InvalidConnectionStringException> {
                ConnectionString.parse(uri).applySrvLookup(listOf(ServerAddress(target)), emptyList())
            }
        }
        ConnectionString.parse("mongodb+srv://localhost").applySrvLookup(listOf(ServerAddress("a.localhost")), emptyList())
            .hosts shouldBe listOf(ServerAddress("a.localhost"))
        ConnectionString.parse("mongodb+srv://test18.test.build.10gen.cc/?replicaSet=repl0")
            .applySrvLookup(listOf(ServerAddress("localhost.sub.test.build.10gen.cc")), emptyList())
            .hosts shouldBe listOf(ServerAddress("localhost.sub.test.build.10gen.cc"))
    }

    test("no SRV records is an error") {
        shouldThrow<InvalidConnectionStringException> {
            ConnectionString.parse("mongodb+srv://test4.test.build.10gen.cc").applySrvLookup(emptyList(), emptyList())
        }
        shouldThrow<InvalidConnectionStringException> { ConnectionString.parse("mongodb://a").applySrvLookup(listOf(local), emptyList()) }
    }

    test("TXT options: only authSource, replicaSet, loadBalanced, one record, URI values win") {
        val s = ConnectionString.parse("mongodb+srv://auser:apass@test5.test.build.10gen.cc/")
            .applySrvLookup(listOf(local), listOf("replicaSet=repl0&authSource=thisDB"))
        s.replicaSet shouldBe "repl0"
        s.connection.credential!!.source shouldBe "thisDB"
        s.connection.tls.enabled shouldBe true
        s.srvHost shouldBe "test5.test.build.10gen.cc"

        val o = ConnectionString.parse("mongodb+srv://auser:apass@test5.test.build.10gen.cc/?authSource=otherDB&replicaSet=mine")
            .applySrvLookup(listOf(local), listOf("replicaSet=repl0&authSource=thisDB"))
        o.connection.credential!!.source shouldBe "otherDB"
        o.replicaSet shouldBe "mine"

        val noCred = ConnectionString.parse("mongodb+srv://test5.test.build.10gen.cc/")
            .applySrvLookup(listOf(local), listOf("replicaSet=repl0&authSource=thisDB"))
        noCred.connection.credential shouldBe null

        val joined = ConnectionString.parse("mongodb+srv://test11.test.build.10gen.cc/")
            .applySrvLookup(listOf(local), listOf("replicaS" + "et=rep" + "l0"))
        joined.replicaSet shouldBe "repl0"

        val cs = ConnectionString.parse("mongodb+srv://test6.test.build.10gen.cc/")
        for (txt in listOf(listOf("replicaSet=repl0", "authSource=otherDB"), listOf("ssl=false"), listOf("authSource"),
            listOf("socketTimeoutMS=500"), listOf("loadBalanced=maybe"))) {
            shouldThrow<InvalidConnectionStringException> { cs.applySrvLookup(listOf(local), txt) }
        }
    }

    test("loadBalanced from TXT: one target, no srvMaxHosts, no replicaSet") {
        val lb = ConnectionString.parse("mongodb+srv://test20.test.build.10gen.cc/")
            .applySrvLookup(listOf(local), listOf("loadBalanced=true"))
        lb.loadBalanced shouldBe true
        lb.connection.loadBalanced shouldBe true
        shouldThrow<InvalidConnectionStringException> {
            ConnectionString.parse("mongodb+srv://test24.test.build.10gen.cc/?srvMaxHosts=1").applySrvLookup(listOf(local), listOf("loadBalanced=true"))
        }
        shouldThrow<InvalidConnectionStringException> {
            ConnectionString.parse("mongodb+srv://test24.test.build.10gen.cc/").applySrvLookup(listOf(local, local2), listOf("loadBalanced=true"))
        }
        ConnectionString.parse("mongodb+srv://test21.test.build.10gen.cc/").applySrvLookup(listOf(local), listOf("loadBalanced=false"))
            .loadBalanced shouldBe false
        shouldThrow<InvalidConnectionStringException> {
            ConnectionString.parse("mongodb+srv://test5.test.build.10gen.cc/?srvMaxHosts=1").applySrvLookup(listOf(local), listOf("replicaSet=repl0"))
        }
    }

    test("srvMaxHosts picks that many distinct targets at random, zero or enough keeps all") {
        val targets = (1..5).map { ServerAddress("h$it.test.build.10gen.cc", 27017) }
        val cs = ConnectionString.parse("mongodb+srv://test1.test.build.10gen.cc/?srvMaxHosts=2")
        repeat(20) { seed ->
            val picked = cs.applySrvLookup(targets, emptyList(), Random(seed)).hosts
            picked shouldHaveSize 2
            picked.toSet() shouldHaveSize 2
            for (p in picked) p shouldBeIn targets
        }
        val seen = (0 until 50).map { cs.applySrvLookup(targets, emptyList(), Random(it)).hosts.toSet() }.toSet()
        (seen.size > 1) shouldBe true
        ConnectionString.parse("mongodb+srv://test1.test.build.10gen.cc/?srvMaxHosts=0").applySrvLookup(targets, emptyList())
            .hosts shouldBe targets
        ConnectionString.parse("mongodb+srv://test1.test.build.10gen.cc/?srvMaxHosts=9").applySrvLookup(targets, emptyList())
            .hosts shouldBe targets
    }
})
