package dev.mooring.prose

import dev.mooring.cmap.ConnectionSettings
import dev.mooring.cmap.DefaultConnectionFactory
import dev.mooring.cmap.DriverInfo
import dev.mooring.cmap.MongoCredential
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.testkit.server.WireServer
import dev.mooring.testkit.server.scram.ScramServer
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.delay
import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString
import java.util.concurrent.ConcurrentHashMap
import kotlin.time.Duration.Companion.seconds

/**
 * The handshake prose tests (mongodb-handshake tests README) that concern the connection layer:
 * "Test 2: the driver accepts an arbitrary auth mechanism" and the client metadata update tests
 * 1–4 (appendMetadata). Prose Test 1 (environment metadata) is in cmap's ClientMetadataSpec,
 * where the environment can be given.
 */
class HandshakeProseSpec : FunSpec({
    timeout = 120.seconds.inWholeMilliseconds

    /** A server recording the `client` document of each connection's handshake. */
    class Recording(val server: WireServer) {
        val handshakes = ConcurrentHashMap<Int, BsonDocument>()
        val pings = ConcurrentHashMap<Int, Int>() // order -> connection number
        init {
            server.handler = { ctx, _, cmd ->
                when (ctx.commandName) {
                    "hello", "isMaster", "ismaster" -> (cmd["client"] as? BsonDocument)?.let { handshakes.putIfAbsent(ctx.connectionNumber, it) }
                    "ping" -> pings[pings.size] = ctx.connectionNumber
                }
                null
            }
        }

        /** Pings through [cluster] and returns the `client` document of the connection that ran it. */
        suspend fun pingClientDocument(cluster: MongoCluster): BsonDocument {
            cluster.runCommand("admin", BsonDocument("ping", BsonInt32(1))).getNumber("ok").intValue() shouldBe 1
            return handshakes.getValue(pings.getValue(pings.size - 1))
        }
    }

    val library = DriverInfo("library", "1.2", "Library Platform")

    /** The `client.driver` name and version and `client.platform` without Mooring's own first part. */
    fun wrapped(client: BsonDocument): Triple<String, String, String> {
        fun strip(s: String) = s.split('|').drop(1).joinToString("|")
        val driver = client.getDocument("driver")
        return Triple(strip(driver.getString("name").value), strip(driver.getString("version").value), strip(client.getString("platform").value))
    }

    fun withoutDriverFields(client: BsonDocument) = client.clone().apply { remove("driver"); remove("platform") }

    /**
     * Runs one metadata-update case: [initial] driver info at construction, [setupAppend] appended
     * before the first ping, then [append] before the second ping on a new connection (the first
     * one has gone idle past maxIdleTimeMS=1). Returns the two `client` documents.
     */
    suspend fun updateCase(initial: List<DriverInfo>, setupAppend: DriverInfo?, append: DriverInfo): Pair<BsonDocument, BsonDocument> {
        WireServer.start().use { server ->
            val rec = Recording(server)
            val settings = MongoClusterSettings.fromUri("mongodb://${server.address}/?maxIdleTimeMS=1").copy(driverInfo = initial)
            val cluster = MongoCluster(settings)
            try {
                setupAppend?.let { cluster.appendMetadata(it) }
                val before = rec.pingClientDocument(cluster)
                delay(20) // the pooled connection is now idle longer than maxIdleTimeMS (1 ms): the next checkout opens a new one
                cluster.appendMetadata(append)
                val after = rec.pingClientDocument(cluster)
                return before to after
            } finally {
                cluster.closeSuspending()
            }
        }
    }

    fun expected(base: String, added: String?) = if (added == null) base else "$base|$added"

    val optionalCases = listOf(
        DriverInfo("framework", "2.0", "Framework Platform"),
        DriverInfo("framework", "2.0", null),
        DriverInfo("framework", null, "Framework Platform"),
        DriverInfo("framework", null, null),
    )

    optionalCases.forEachIndexed { i, case ->
        test("metadata update prose Test 1 case ${i + 1}: metadata appended after initialization (${case.name}, ${case.version}, ${case.platform})") {
            val (before, after) = updateCase(listOf(library), null, case)
            wrapped(before) shouldBe Triple("library", "1.2", "Library Platform")
            wrapped(after) shouldBe Triple(expected("library", case.name), expected("1.2", case.version), expected("Library Platform", case.platform))
            withoutDriverFields(after) shouldBe withoutDriverFields(before)
        }
    }

    optionalCases.forEachIndexed { i, case ->
        test("metadata update prose Test 2 case ${i + 1}: multiple successive updates (${case.name}, ${case.version}, ${case.platform})") {
            val (before, after) = updateCase(emptyList(), library, case)
            wrapped(before) shouldBe Triple("library", "1.2", "Library Platform")
            wrapped(after) shouldBe Triple(expected("library", case.name), expected("1.2", case.version), expected("Library Platform", case.platform))
            withoutDriverFields(after) shouldBe withoutDriverFields(before)
        }
    }

    val identicalCases = listOf(
        DriverInfo("library", "1.2", "Library Platform"),
        DriverInfo("framework", "1.2", "Library Platform"),
        DriverInfo("library", "2.0", "Library Platform"),
        DriverInfo("library", "1.2", "Framework Platform"),
        DriverInfo("framework", "2.0", "Library Platform"),
        DriverInfo("framework", "1.2", "Framework Platform"),
        DriverInfo("library", "2.0", "Framework Platform"),
        DriverInfo("framework", "2.0", "Framework Platform"),
    )

    identicalCases.forEachIndexed { i, case ->
        test("metadata update prose Test 3 case ${i + 1}: successive updates with identical or partly identical DriverInfo (${case.name}, ${case.version}, ${case.platform})") {
            val (before, after) = updateCase(emptyList(), library, case)
            if (case == library) {
                wrapped(after) shouldBe Triple("library", "1.2", "Library Platform")
            } else {
                wrapped(after) shouldBe Triple("library|${case.name}", "1.2|${case.version}", "Library Platform|${case.platform}")
            }
            withoutDriverFields(after) shouldBe withoutDriverFields(before)
        }
    }

    test("metadata update prose Test 4: metadata identical to the initial metadata is not appended") {
        val (before, after) = updateCase(listOf(library), null, library)
        after shouldBe before
    }

    test("a server that closes the connection during the initial hello (OP_MSG not supported): the error says the connection closed") {
        WireServer.start().use { server ->
            server.configureFailPoint(
                BsonDocument.parse(
                    """{configureFailPoint: "failCommand", mode: "alwaysOn", data: {failCommands: ["hello", "isMaster"], appName: "op-msg-handshake-test", closeConnection: true}}""",
                ),
            )
            val cluster = MongoCluster("mongodb://${server.address}/?appName=op-msg-handshake-test&serverSelectionTimeoutMS=500")
            try {
                val e = io.kotest.assertions.throwables.shouldThrowAny { cluster.runCommand("test", BsonDocument("ping", BsonInt32(1))) }
                e.message!!.lowercase() shouldContain "connection closed"
            } finally {
                cluster.closeSuspending()
            }
        }
    }

    test("handshake prose Test 2: the driver accepts an arbitrary auth mechanism in saslSupportedMechs") {
        WireServer.start().use { server ->
            val scram = ScramServer()
            scram.addUser("admin", "user", "pencil")
            scram.install(server)
            val scramHello = server.hello
            server.hello = { ctx, cmd ->
                val reply = scramHello(ctx, cmd)
                val mechs = (reply["saslSupportedMechs"] as? BsonArray)?.clone() ?: BsonArray(listOf(BsonString("SCRAM-SHA-256")))
                mechs.add(BsonString("arbitrary"))
                reply.append("saslSupportedMechs", mechs)
            }
            val factory = DefaultConnectionFactory(
                ConnectionSettings(connectTimeoutMS = 5_000, credential = MongoCredential(null, "user", "admin", "pencil".toCharArray())),
            )
            try {
                val c = factory.create(server.address, 1, 0)
                c.establish()
                c.command("admin", BsonDocument("ping", BsonInt32(1))).getNumber("ok").intValue() shouldBe 1
                c.close()
            } finally {
                factory.close()
            }
        }
    }
})
