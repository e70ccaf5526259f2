package dev.mooring.bench.worker

import dev.mooring.bench.floor.FloorDriver
import dev.mooring.bench.mooring.MooringDriver
import dev.mooring.bench.mooring.MooringJavaDriver
import dev.mooring.bench.official.JavaReactiveDriver
import dev.mooring.bench.official.JavaSyncDriver
import dev.mooring.bench.official.KotlinCoroutineDriver
import dev.mooring.bench.report.Library
import dev.mooring.bench.report.Scenario
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.jsonObject

/**
 * A worker JVM: `WorkerMain <library>`. Reads one [CellCommand] JSON per stdin line, runs it
 * and answers on stdout with `RESULT {metrics}`, `NA <reason>` (the library cannot run that
 * cell) or `ERROR <message>`. Everything else a library prints goes to stderr.
 */
object WorkerMain {
    @JvmStatic
    fun main(args: Array<String>) {
        require(args.size == 1) { "usage: WorkerMain ${Library.entries.joinToString("|") { it.key }}" }
        val driver: LibraryDriver = when (Library.of(args[0])) {
            Library.MOORING -> MooringDriver(callersOnEventLoops = true)
            Library.MOORING_DEFAULT -> MooringDriver(callersOnEventLoops = false)
            Library.MOORING_ONE_LOOP -> MooringDriver(callersOnEventLoops = true, eventLoopThreads = 1)
            Library.MOORING_JAVA -> MooringJavaDriver()
            Library.JAVA_SYNC -> JavaSyncDriver()
            Library.JAVA_REACTIVE -> JavaReactiveDriver()
            Library.KOTLIN_COROUTINE -> KotlinCoroutineDriver()
            Library.FLOOR -> FloorDriver()
        }
        val protocol = System.out
        System.setOut(System.err) // libraries must not write into the protocol stream
        protocol.println("READY")
        protocol.flush()
        while (true) {
            val line = readlnOrNull() ?: return
            if (line.isBlank()) continue
            val reply = try {
                val cmd = CellCommand.fromJson(Json.parseToJsonElement(line).jsonObject)
                val metrics = when (cmd.scenario) {
                    Scenario.PING_MONGO_JAVA_SERVER, Scenario.PING_RESPONDER -> driver.ping(cmd)
                    Scenario.COLD_START -> driver.coldStart(cmd)
                    Scenario.POOL_ONLY -> driver.poolOnly(cmd)
                    Scenario.WAITERS_100K -> driver.waiters(cmd)
                    Scenario.FAILOVER_STREAM, Scenario.FAILOVER_POLL -> driver.failover(cmd)
                    else -> if (cmd.scenario.isWorkload) driver.workload(cmd) else throw IllegalArgumentException("no handler for ${cmd.scenario.key}")
                }
                "RESULT " + buildJsonObject { for ((k, v) in metrics) put(k, JsonPrimitive(v)) }
            } catch (e: NotApplicable) {
                "NA " + e.message
            } catch (t: Throwable) {
                t.printStackTrace()
                "ERROR " + t.toString().replace('\n', ' ')
            }
            protocol.println(reply)
            protocol.flush()
        }
    }
}
