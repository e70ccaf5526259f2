package dev.mooring.integration

import dev.mooring.cmap.ServerApi
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.sdam.RunCursorCommandOptions
import dev.mooring.testkit.server.WireServer
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainAll
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.flow.take
import kotlinx.coroutines.flow.toList
import org.bson.BsonArray
import org.bson.BsonBoolean
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString
import java.util.concurrent.CopyOnWriteArrayList
import kotlin.time.Duration.Companion.seconds

/**
 * versioned-api.md through a cluster, as the server sees it: the declared API on every command
 * (getMore and killCursors included) and every hello, the optional flags only when the user set
 * them, the caller's own API fields replaced, nothing at all without a declaration, and unknown
 * versions refused at construction.
 */
class StableApiSpec : FunSpec({
    timeout = 60.seconds.inWholeMilliseconds

    /** Runs a command, a cursor read stopped early (find, getMore, killCursors) and returns every command the server saw. */
    suspend fun commandsSeen(api: ServerApi?, command: BsonDocument = BsonDocument("ping", BsonInt32(1))): List<BsonDocument> {
        val seen = CopyOnWriteArrayList<BsonDocument>()
        WireServer.start().use { server ->
            server.handler = { _, _, cmd -> seen.add(cmd); null }
            val base = MongoClusterSettings.fromUri("mongodb://${server.address}/?directConnection=true&heartbeatFrequencyMS=500")
            val cluster = MongoCluster(base.copy(connection = base.connection.copy(serverApi = api)))
            try {
                cluster.runCommand("db", command)
                val docs = BsonArray((0 until 30).map { BsonDocument("_id", BsonInt32(it)) })
                cluster.runCommand("db", BsonDocument("insert", BsonString("c")).append("documents", docs))
                val find = BsonDocument("find", BsonString("c")).append("filter", BsonDocument()).append("batchSize", BsonInt32(10))
                cluster.runCursorCommand("db", find, RunCursorCommandOptions(batchSize = 10)).take(15).toList().size shouldBe 15
            } finally {
                cluster.closeSuspending()
            }
        }
        return seen.toList()
    }

    test("a declared API is on every command and every hello; unset flags are never sent") {
        val seen = commandsSeen(ServerApi(ServerApi.V1, strict = true))
        val names = seen.map { it.keys.first() }
        names shouldContainAll listOf("hello", "ping", "insert", "find", "getMore", "killCursors")
        withClue(names) {
            names.contains("isMaster") shouldBe false
            names.contains("ismaster") shouldBe false
        }
        for (cmd in seen) {
            withClue(cmd.toJson()) {
                cmd["apiVersion"] shouldBe BsonString("1")
                cmd["apiStrict"] shouldBe BsonBoolean.TRUE
                cmd.containsKey("apiDeprecationErrors") shouldBe false
            }
        }
    }

    test("flags the user set are sent even when equal to the server's default") {
        val seen = commandsSeen(ServerApi(ServerApi.V1, strict = false, deprecationErrors = false))
        for (cmd in seen) {
            withClue(cmd.toJson()) {
                cmd["apiStrict"] shouldBe BsonBoolean.FALSE
                cmd["apiDeprecationErrors"] shouldBe BsonBoolean.FALSE
            }
        }
    }

    test("the command document is not inspected: the client's declaration replaces the caller's API fields") {
        val ping = BsonDocument("ping", BsonInt32(1)).append("apiVersion", BsonString("2")).append("apiStrict", BsonBoolean.FALSE)
        val sent = commandsSeen(ServerApi(ServerApi.V1, strict = true), ping).first { it.keys.first() == "ping" }
        sent["apiVersion"] shouldBe BsonString("1")
        sent["apiStrict"] shouldBe BsonBoolean.TRUE
    }

    test("without a declaration no API field is ever sent, and the handshake is the legacy hello") {
        val seen = commandsSeen(null)
        seen.map { it.keys.first() } shouldContainAll listOf("isMaster", "ping", "getMore", "killCursors")
        for (cmd in seen) {
            withClue(cmd.toJson()) { cmd.keys.filter { it.startsWith("api") } shouldBe emptyList() }
        }
    }

    test("an unknown API version is refused at construction, naming the versions Mooring knows") {
        val e = shouldThrow<IllegalArgumentException> { ServerApi("2") }
        e.message shouldContain "'2'"
        e.message shouldContain "'1'"
    }
})
