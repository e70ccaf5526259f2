package dev.mooring.bench.server

import dev.mooring.bench.workload.Datasets
import dev.mooring.bench.workload.Ldjson
import org.bson.BsonDocument
import org.bson.BsonInt32
import dev.mooring.bench.workload.WorkloadTask
import de.bwaldvogel.mongo.MongoServer
import de.bwaldvogel.mongo.backend.memory.MemoryBackend
import dev.mooring.bench.scenario.epochMicros
import dev.mooring.testkit.replset.ReplicaSetSimulator
import kotlinx.coroutines.runBlocking
import java.io.BufferedReader
import java.io.InputStreamReader
import java.io.PrintWriter
import java.net.InetAddress
import java.net.ServerSocket
import java.net.Socket

/**
 * The server JVM of the benchmarks. `ServerMain <kind>` with kind `mongo-java-server`,
 * `responder`, `canned` (the workload tasks' [CannedServer]; `canned ldjson-export` also serves the LDJSON export) or `replset`; prints one `READY <target>` line on stdout (a `mongodb://…/?` URI,
 * or for `replset` the `host:port` of its control port) and serves until stdin closes.
 */
object ServerMain {
    @JvmStatic
    fun main(args: Array<String>) {
        require(args.size == 1 || (args.size == 2 && args[0] == "canned" && args[1] == LDJSON_EXPORT)) {
            "usage: ServerMain mongo-java-server|responder|canned [$LDJSON_EXPORT]|replset"
        }
        val closer: AutoCloseable = when (args[0]) {
            "mongo-java-server" -> {
                val server = MongoServer(MemoryBackend())
                server.bind("127.0.0.1", 0)
                println("READY mongodb://127.0.0.1:${server.localAddress.port}/?")
                AutoCloseable { server.shutdownNow() }
            }
            "responder" -> {
                val r = PingResponder.bind()
                Thread(r::run, "responder").apply { isDaemon = true }.start()
                println("READY mongodb://127.0.0.1:${r.port}/?")
                r
            }
            "canned" -> {
                val export = if (args.getOrNull(1) == LDJSON_EXPORT) exportDocuments() else emptyList()
                val r = CannedServer.bind(Datasets.document(WorkloadTask.FIND_MANY), exportDocuments = export)
                Thread(r::run, "canned").apply { isDaemon = true }.start()
                println("READY mongodb://127.0.0.1:${r.port}/?")
                r
            }
            "replset" -> {
                val sim = runBlocking { ReplicaSetSimulator.start(dataMembers = 3) }
                val control = ServerSocket(0, 16, InetAddress.getByName("127.0.0.1"))
                Thread({ serveControl(control, sim) }, "replset-control").apply { isDaemon = true }.start()
                println("READY 127.0.0.1:${control.localPort}")
                AutoCloseable {
                    control.close()
                    sim.close()
                }
            }
            else -> throw IllegalArgumentException("unknown server kind '${args[0]}'")
        }
        System.out.flush()
        // Serve until the harness closes our stdin (or dies).
        while (System.`in`.read() >= 0) Unit
        closer.close()
    }

    /** The argument after `canned` that has it serve the LDJSON export's find ([exportDocuments]). */
    const val LDJSON_EXPORT = "ldjson-export"

    /**
     * What the canned server answers an LDJSON export's find with: the first LDJSON_MULTI file's 5,000 documents, `_id`
     * their line (as the export's setup numbers them on a real server), for every export file.
     */
    private fun exportDocuments(): List<BsonDocument> =
        Ldjson.read(Datasets.parallelFiles(WorkloadTask.LDJSON_MULTI_FILE_EXPORT).first()).onEachIndexed { i, d -> d["_id"] = BsonInt32(i) }

    private fun serveControl(control: ServerSocket, sim: ReplicaSetSimulator) {
        while (!control.isClosed) {
            val s = try { control.accept() } catch (_: java.io.IOException) { return }
            Thread({ controlSession(s, sim) }, "replset-control-session").apply { isDaemon = true }.start()
        }
    }

    private fun controlSession(s: Socket, sim: ReplicaSetSimulator) = s.use {
        val input = BufferedReader(InputStreamReader(s.getInputStream(), Charsets.UTF_8))
        val out = PrintWriter(s.getOutputStream(), true)
        while (true) {
            val line = input.readLine() ?: return
            val reply = try {
                when (line.trim()) {
                    "uri" -> "URI " + sim.seedUri()
                    "primary" -> "PRIMARY " + (sim.primary?.host ?: "none")
                    "elect" -> {
                        val current = sim.primary
                        val next = sim.members.first { it !== current }
                        val at = epochMicros() // before the change becomes visible: never underestimates detection
                        sim.elect(next)
                        "ELECTED ${next.host} $at"
                    }
                    else -> "ERROR unknown command '$line'"
                }
            } catch (e: Exception) {
                "ERROR $e"
            }
            out.println(reply)
        }
    }
}
