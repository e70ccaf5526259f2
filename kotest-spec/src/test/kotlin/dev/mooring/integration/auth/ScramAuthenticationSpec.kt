package dev.mooring.integration.auth

import dev.mooring.cmap.ConnectionPool
import dev.mooring.cmap.ConnectionPoolSettings
import dev.mooring.cmap.ConnectionSettings
import dev.mooring.cmap.DefaultConnectionFactory
import dev.mooring.cmap.MongoAuthenticationException
import dev.mooring.cmap.MongoCredential
import dev.mooring.cmap.MongoNetworkTimeoutException
import dev.mooring.events.EventBus
import dev.mooring.events.MooringEvent
import dev.mooring.testkit.server.WireServer
import dev.mooring.testkit.server.scram.ScramServer
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.string.shouldNotContain
import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString
import java.util.concurrent.CopyOnWriteArrayList
import kotlin.time.Duration.Companion.seconds

/** SCRAM-SHA-1 / SCRAM-SHA-256 against the test kit's server-side SCRAM (auth.md, handshake.md). */
class ScramAuthenticationSpec : FunSpec({
    timeout = 60.seconds.inWholeMilliseconds
    val password = "Tr0ub4dor&3-secret"

    class Setup(val server: WireServer, val scram: ScramServer)

    suspend fun <T> withScram(block: suspend (Setup) -> T): T {
        val server = WireServer.start()
        val scram = ScramServer()
        scram.install(server)
        try {
            return block(Setup(server, scram))
        } finally {
            server.close()
        }
    }

    fun settings(mechanism: String?, user: String = "alice", pw: String = password, source: String = "admin") =
        ConnectionSettings(connectTimeoutMS = 10_000, socketTimeoutMS = 10_000, credential = MongoCredential(mechanism, user, source, pw.toCharArray()))

    val collections = java.util.concurrent.atomic.AtomicInteger()

    suspend fun DefaultConnectionFactory.connectAndUse(s: Setup) {
        val c = create(s.server.address, 1, 0)
        val coll = BsonString("c${collections.incrementAndGet()}")
        try {
            c.establish()
            // insert/find need an authenticated connection on this server
            c.command("db", BsonDocument("insert", coll).append("documents", BsonArray(listOf(BsonDocument("_id", BsonInt32(1))))))
            val found = c.command("db", BsonDocument("find", coll))
            found.getDocument("cursor").getArray("firstBatch").size shouldBe 1
        } finally {
            c.close()
        }
    }

    for (mechanism in listOf("SCRAM-SHA-1", "SCRAM-SHA-256")) {
        test("$mechanism authenticates with the right password and the connection is authorized") {
            withScram { s ->
                s.scram.addUser("admin", "alice", password, listOf(mechanism))
                DefaultConnectionFactory(settings(mechanism)).use { it.connectAndUse(s) }
                s.scram.successfulAuthentications shouldBe 1
            }
        }

        test("$mechanism with a wrong password fails with a typed error that hides the password") {
            withScram { s ->
                s.scram.addUser("admin", "alice", password, listOf(mechanism))
                val wrong = "wrong-$password"
                DefaultConnectionFactory(settings(mechanism, pw = wrong)).use { f ->
                    val c = f.create(s.server.address, 7, 3)
                    val e = shouldThrow<MongoAuthenticationException> { c.establish() }
                    e.serverCode shouldBe 18
                    e.handshakeCompleted shouldBe false
                    e.generation shouldBe 3
                    e.address shouldBe s.server.address
                    c.isClosed shouldBe true
                    val texts = generateSequence<Throwable>(e) { it.cause }.flatMap { listOf(it.message ?: "", it.toString()) }.toList() +
                        f.settings.toString() + f.settings.credential.toString()
                    for (t in texts) {
                        t shouldNotContain wrong
                        t shouldNotContain password
                    }
                    e.message!! shouldContain "alice"
                    e.message!! shouldContain mechanism
                }
            }
        }

        test("$mechanism: a server that stalls mid-conversation is cut off by connectTimeoutMS (a network timeout)") {
            withScram { s ->
                s.scram.addUser("admin", "alice", password, listOf(mechanism))
                // the conversation's saslContinue gets no answer for far longer than connectTimeoutMS
                s.server.configureFailPoint(
                    BsonDocument("configureFailPoint", BsonString("failCommand")).append("mode", BsonDocument("times", BsonInt32(1)))
                        .append("data", BsonDocument("failCommands", BsonArray(listOf(BsonString("saslContinue")))).append("blockConnection", org.bson.BsonBoolean(true)).append("blockTimeMS", BsonInt32(60_000))),
                )
                val quick = settings(mechanism).copy(connectTimeoutMS = 300)
                DefaultConnectionFactory(quick).use { f ->
                    val c = f.create(s.server.address, 1, 0)
                    val e = shouldThrow<MongoNetworkTimeoutException> { c.establish() }
                    e.message!! shouldContain "300 ms"
                    e.handshakeCompleted shouldBe false
                    c.isClosed shouldBe true
                    s.scram.successfulAuthentications shouldBe 0
                }
            }
        }

        test("$mechanism: a forged server signature is rejected") {
            withScram { s ->
                s.scram.addUser("admin", "alice", password, listOf(mechanism))
                s.scram.forgeServerSignature = true
                DefaultConnectionFactory(settings(mechanism)).use { f ->
                    val c = f.create(s.server.address, 1, 0)
                    val e = shouldThrow<MongoAuthenticationException> { c.establish() }
                    e.message!! shouldContain "server signature"
                    e.serverCode shouldBe null
                    e.handshakeCompleted shouldBe false
                    c.isClosed shouldBe true
                }
            }
        }
    }

    test("without a mechanism, speculative SCRAM-SHA-256 in the handshake saves the saslStart round trip") {
        withScram { s ->
            s.scram.addUser("admin", "alice", password)
            val seen = CopyOnWriteArrayList<BsonDocument>()
            val next = s.server.handler
            s.server.handler = { ctx, db, cmd -> seen.add(cmd); next(ctx, db, cmd) }
            DefaultConnectionFactory(settings(null)).use { it.connectAndUse(s) }
            s.scram.speculativeConversations shouldBe 1
            s.server.counters.commandCount("saslStart") shouldBe 0
            s.server.counters.commandCount("saslContinue") shouldBe 1
            val hello = seen.first()
            hello["saslSupportedMechs"] shouldBe BsonString("admin.alice")
            val spec = hello.getDocument("speculativeAuthenticate")
            spec["mechanism"] shouldBe BsonString("SCRAM-SHA-256")
            spec["db"] shouldBe BsonString("admin")
            spec.getDocument("options")["skipEmptyExchange"]?.asBoolean()?.value shouldBe true
        }
    }

    test("an explicit SCRAM-SHA-1 mechanism is used for speculative authentication too") {
        withScram { s ->
            s.scram.addUser("admin", "alice", password, listOf("SCRAM-SHA-1"))
            DefaultConnectionFactory(settings("SCRAM-SHA-1")).use { it.connectAndUse(s) }
            s.scram.speculativeConversations shouldBe 1
            s.server.counters.commandCount("saslStart") shouldBe 0
        }
    }

    test("negotiation falls back to SCRAM-SHA-1 when the user has only SCRAM-SHA-1 (speculative SHA-256 refused)") {
        withScram { s ->
            s.scram.addUser("admin", "alice", password, listOf("SCRAM-SHA-1"))
            val starts = CopyOnWriteArrayList<String>()
            val next = s.server.handler
            s.server.handler = { ctx, db, cmd ->
                if (ctx.commandName == "saslStart") starts.add(cmd.getString("mechanism").value)
                next(ctx, db, cmd)
            }
            DefaultConnectionFactory(settings(null)).use { it.connectAndUse(s) }
            s.scram.speculativeConversations shouldBe 0
            starts shouldBe listOf("SCRAM-SHA-1")
        }
    }

    test("a server that ignores skipEmptyExchange gets the extra empty saslContinue") {
        withScram { s ->
            s.scram.addUser("admin", "alice", password)
            val next = s.server.handler
            s.server.handler = { ctx, db, cmd ->
                // strip skipEmptyExchange as an old server would not honour it
                if (ctx.commandName == "saslStart") cmd.remove("options")
                next(ctx, db, cmd)
            }
            s.server.hello = run {
                val h = s.server.hello
                { ctx, cmd -> cmd.remove("speculativeAuthenticate"); h(ctx, cmd) }
            }
            DefaultConnectionFactory(settings("SCRAM-SHA-256")).use { it.connectAndUse(s) }
            s.server.counters.commandCount("saslStart") shouldBe 1
            s.server.counters.commandCount("saslContinue") shouldBe 2
        }
    }

    test("a server asking for fewer than 4096 iterations is refused (downgrade protection)") {
        withScram { s ->
            s.scram.addUser("admin", "alice", password, iterations = 1000)
            DefaultConnectionFactory(settings("SCRAM-SHA-256")).use { f ->
                val e = shouldThrow<MongoAuthenticationException> { f.create(s.server.address, 1, 0).establish() }
                e.message!! shouldContain "1000 iterations"
            }
            s.scram.successfulAuthentications shouldBe 0
        }
    }

    test("without speculative support on the server, a wrong password fails in the standard conversation") {
        withScram { s ->
            s.scram.addUser("admin", "alice", password)
            s.server.hello = run {
                val h = s.server.hello
                { ctx, cmd -> cmd.remove("speculativeAuthenticate"); h(ctx, cmd) }
            }
            DefaultConnectionFactory(settings(null, pw = "nope-$password")).use { f ->
                val e = shouldThrow<MongoAuthenticationException> { f.create(s.server.address, 1, 5).establish() }
                e.serverCode shouldBe 18
                e.generation shouldBe 5
                e.message!! shouldContain "SCRAM-SHA-256"
                e.message!! shouldNotContain password
            }
            s.server.counters.commandCount("saslStart") shouldBe 1
        }
    }

    test("a password SASLprep prohibits is an authentication error, not a network error") {
        withScram { s ->
            s.scram.addUser("admin", "alice", password)
            DefaultConnectionFactory(settings(null, pw = "bad\u0007pw")).use { f ->
                val e = shouldThrow<MongoAuthenticationException> { f.create(s.server.address, 1, 0).establish() }
                e.message!! shouldContain "SASLprep"
                e.message!! shouldNotContain "bad\u0007pw"
            }
        }
    }

    test("users in another authSource and names needing escaping authenticate") {
        withScram { s ->
            s.scram.addUser("app", "bob,the=admin", password)
            DefaultConnectionFactory(settings("SCRAM-SHA-256", user = "bob,the=admin", source = "app")).use { it.connectAndUse(s) }
        }
    }

    test("SASLprep: passwords given in non-normalized form authenticate for SCRAM-SHA-256 (auth.md IX / \u2168 users)") {
        withScram { s ->
            s.scram.addUser("admin", "IX", "IX", listOf("SCRAM-SHA-256"))
            s.scram.addUser("admin", "\u2168", "\u2163", listOf("SCRAM-SHA-256"))
            for ((user, pw) in listOf("IX" to "IX", "IX" to "I\u00ADX", "\u2168" to "IV", "\u2168" to "I\u00ADV")) {
                DefaultConnectionFactory(settings("SCRAM-SHA-256", user = user, pw = pw)).use { it.connectAndUse(s) }
            }
            // without a mechanism too (negotiated SCRAM-SHA-256)
            DefaultConnectionFactory(settings(null, user = "\u2168", pw = "I\u00ADV")).use { it.connectAndUse(s) }
        }
    }

    test("monitoring connections never authenticate") {
        withScram { s ->
            s.scram.addUser("admin", "alice", password)
            val hellos = CopyOnWriteArrayList<BsonDocument>()
            s.server.hello = run {
                val h = s.server.hello
                { ctx, cmd -> hellos.add(cmd); h(ctx, cmd) }
            }
            DefaultConnectionFactory(settings(null)).use { f ->
                val m = f.createMonitoringConnection(s.server.address)
                m.establish()
                m.close()
            }
            hellos.single().containsKey("speculativeAuthenticate") shouldBe false
            hellos.single().containsKey("saslSupportedMechs") shouldBe false
            s.server.counters.commandCount("saslStart") shouldBe 0
            s.scram.speculativeConversations shouldBe 0
        }
    }

    test("a pooled connection whose auth fails leaves the pool usable once the user is fixed; events hide the password") {
        withScram { s ->
            s.scram.addUser("admin", "alice", "another-password")
            val bus = EventBus()
            val events = CopyOnWriteArrayList<MooringEvent>()
            bus.addListener { events.add(it) }
            DefaultConnectionFactory(settings(null)).use { f ->
                val pool = ConnectionPool(s.server.address, ConnectionPoolSettings(maintenanceIntervalMS = -1), f, bus)
                try {
                    pool.ready()
                    val e = shouldThrow<MongoAuthenticationException> { pool.checkOut() }
                    e.handshakeCompleted shouldBe false
                    e.generation shouldBe 0
                    s.scram.addUser("admin", "alice", password)
                    val c = pool.checkOut()
                    c.command("db", BsonDocument("find", BsonString("c")))["ok"]?.asNumber()?.intValue() shouldBe 1
                    pool.checkIn(c)
                } finally {
                    pool.close()
                }
            }
            events.isEmpty() shouldBe false
            for (ev in events) ev.toString() shouldNotContain password
        }
    }

    test("factories refuse credentials they cannot use, with clear errors") {
        shouldThrow<IllegalArgumentException> {
            DefaultConnectionFactory(ConnectionSettings(credential = MongoCredential("PLAIN", "u", "\$external", "p".toCharArray())))
        }.message!! shouldContain "PLAIN"
        shouldThrow<IllegalArgumentException> {
            DefaultConnectionFactory(ConnectionSettings(credential = MongoCredential("SCRAM-SHA-256", "u", "admin", null)))
        }.message!! shouldContain "password"
    }
})
