package dev.mooring.bench.worker

import dev.mooring.bench.report.Scenario
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.int
import kotlinx.serialization.json.jsonPrimitive
import kotlinx.serialization.json.long

/**
 * One instruction from the harness to a worker JVM, sent as one JSON line. [target] is the
 * server (a `mongodb://` URI, or `host:port` of the replica-set control port for failover);
 * [serverPid] the process id of the server JVM whose CPU the ping cells also measure (null: not
 * measured). A workload task ([Scenario.isWorkload]) runs [warmupIterations] discarded and
 * [count] measured iterations against [target] (whose URI carries the compressor) on [server]
 * with [compressor]: the cell's report identity.
 */
data class CellCommand(
    val scenario: Scenario,
    val callers: Int = 1,
    val maxPoolSize: Int = 10,
    val target: String = "",
    val warmupMs: Long = 0,
    val measureMs: Long = 0,
    val count: Int = 0,
    val serverPid: Long? = null,
    val server: String? = null,
    val compressor: String? = null,
    val warmupIterations: Int = 0,
    /** A workload task's operations per iteration when the plan scales it down ([dev.mooring.bench.workload.WorkloadTask.operations] when 0). */
    val operations: Int = 0,
) {
    fun toJson(): JsonObject = buildJsonObject {
        put("scenario", JsonPrimitive(scenario.key))
        put("callers", JsonPrimitive(callers))
        put("maxPoolSize", JsonPrimitive(maxPoolSize))
        put("target", JsonPrimitive(target))
        put("warmupMs", JsonPrimitive(warmupMs))
        put("measureMs", JsonPrimitive(measureMs))
        put("count", JsonPrimitive(count))
        if (serverPid != null) put("serverPid", JsonPrimitive(serverPid))
        if (server != null) put("server", JsonPrimitive(server))
        if (compressor != null) put("compressor", JsonPrimitive(compressor))
        if (warmupIterations != 0) put("warmupIterations", JsonPrimitive(warmupIterations))
        if (operations != 0) put("operations", JsonPrimitive(operations))
    }

    companion object {
        fun fromJson(o: JsonObject): CellCommand = CellCommand(
            scenario = Scenario.of(o.getValue("scenario").jsonPrimitive.content),
            callers = o.getValue("callers").jsonPrimitive.int,
            maxPoolSize = o.getValue("maxPoolSize").jsonPrimitive.int,
            target = o.getValue("target").jsonPrimitive.content,
            warmupMs = o.getValue("warmupMs").jsonPrimitive.long,
            measureMs = o.getValue("measureMs").jsonPrimitive.long,
            count = o.getValue("count").jsonPrimitive.int,
            serverPid = o["serverPid"]?.jsonPrimitive?.long,
            server = o["server"]?.jsonPrimitive?.content,
            compressor = o["compressor"]?.jsonPrimitive?.content,
            warmupIterations = o["warmupIterations"]?.jsonPrimitive?.int ?: 0,
            operations = o["operations"]?.jsonPrimitive?.int ?: 0,
        ).also {
            require(it.callers >= 1) { "callers must be >= 1" }
            require(it.maxPoolSize >= 1) { "maxPoolSize must be >= 1" }
        }
    }
}
