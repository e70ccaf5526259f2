package dev.mooring.cluster

import dev.mooring.cmap.CommandStartedEvent
import dev.mooring.cmap.CommandSucceededEvent
import dev.mooring.cmap.ConnectionCheckedInEvent
import dev.mooring.cmap.ConnectionCheckedOutEvent
import dev.mooring.cmap.MongoCommandException
import dev.mooring.sdam.CursorType
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.sdam.MongoCursorProtocolException
import dev.mooring.sdam.MongoCursorServerUnavailableException
import dev.mooring.sdam.MongoMissingCursorException
import dev.mooring.sdam.ReadPreference
import dev.mooring.sdam.ReadPreferenceMode
import dev.mooring.sdam.RunCursorCommandOptions
import dev.mooring.sdam.ServerType
import dev.mooring.testkit.replset.ReplicaSetSimulator
import dev.mooring.testkit.server.Reply
import dev.mooring.testkit.server.WireServer
import dev.mooring.testkit.sharded.LoadBalancerSimulator
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlinx.coroutines.flow.collect
import kotlinx.coroutines.flow.take
import kotlinx.coroutines.flow.toList
import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonInt64
import org.bson.BsonString
import kotlin.time.Duration.Companion.seconds

/** runCursorCommand over the test kit's servers: batches, getMore routing, killCursors, pinning, typed errors. */
class CursorSpec : FunSpec({
    timeout = 120.seconds.inWholeMilliseconds

    fun insertCommand(from: Int, count: Int) = BsonDocument("insert", BsonString("c"))
        .append("documents", BsonArray((from until from + count).map { BsonDocument("_id", BsonInt32(it)) }))

    fun find(batchSize: Int = 101) = BsonDocument("find", BsonString("c")).append("batchSize", BsonInt32(batchSize))

    val secondary = ReadPreference(ReadPreferenceMode.SECONDARY)

    test("10,000 documents in batches of 101 from a secondary: every getMore on the server that opened the cursor") {
        ReplicaSetSimulator.start().use { rs ->
            val recorder = EventRecorder()
            val cluster = MongoCluster(MongoClusterSettings.fromUri(rs.seedUri("heartbeatFrequencyMS=500")), listOf(recorder))
            try {
                cluster.awaitTopology { t -> t.servers.values.count { it.type == ServerType.RS_SECONDARY } == 2 && t.primary != null }
                for (i in 0 until 10) cluster.runCommand("db", insertCommand(i * 1000, 1000))
                recorder.clear()
                val docs = cluster.runCursorCommand("db", find(), RunCursorCommandOptions(readPreference = secondary, batchSize = 101)).toList()
                docs.map { it.getInt32("_id").value } shouldContainExactly (0 until 10_000).toList()
                val started = recorder.ofType<CommandStartedEvent>()
                val find = started.single { it.commandName == "find" }
                val getMores = started.filter { it.commandName == "getMore" }
                getMores.size shouldBe 99 // 10,000 = 101 + 99 x 101 (the last one short)
                getMores.map { it.address }.toSet() shouldBe setOf(find.address)
                cluster.topology.value.servers.getValue(find.address).type shouldBe ServerType.RS_SECONDARY
                getMores.map { it.command["lsid"] }.toSet() shouldBe setOf(find.command["lsid"])
                (find.command["lsid"] != null) shouldBe true
                started.count { it.commandName == "killCursors" } shouldBe 0
                rs.members.sumOf { it.openCursors } shouldBe 0
            } finally {
                cluster.closeAndCheckNoCoroutines()
            }
        }
    }
})
