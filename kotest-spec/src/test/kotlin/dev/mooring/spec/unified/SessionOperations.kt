package dev.mooring.spec.unified

import dev.mooring.cmap.CommandStartedEvent
import dev.mooring.events.MooringEvent
import dev.mooring.sdam.ClientSession
import dev.mooring.sdam.MongoCluster
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.jsonPrimitive

/**
 * The session entities and session operations of the unified format (unified-test-format.md):
 * `session` entities (explicit sessions from [MongoCluster.startSession]), `endSession`,
 * `assertSessionDirty` / `assertSessionNotDirty`, `assertSameLsidOnLastTwoCommands` /
 * `assertDifferentLsidOnLastTwoCommands`, and the `$$sessionLsid` matching operator (resolved
 * in expectations before matching). Session options other than none (snapshot, causal
 * consistency, transaction options) are a missing feature, rejected when the entity is made.
 * One instance per test run; used from its coroutine.
 */
class SessionOperations {
    private val sessions = HashMap<String, ClientSession>()
    /** The lsid of each session, kept after the session ended (expectations name ended sessions too). */
    private val lsids = HashMap<String, String>()

    /** Creates the session entity [id] of [cluster] as `createEntities` describes it in [spec]. */
    fun create(id: String, cluster: MongoCluster, spec: JsonObject) {
        spec["sessionOptions"]?.let { throw UnsupportedOperationException("session options ${it}") }
        val session = cluster.startSession()
        sessions[id] = session
        lsids[id] = session.lsid.toJson()
    }

    /** The session entity named by the operation argument `session`, or null. */
    fun argument(args: JsonObject): ClientSession? = args["session"]?.jsonPrimitive?.content?.let {
        sessions[it] ?: invalidTest("the session argument '$it' is not a session entity")
    }

    /** True when [id] names a session entity. */
    fun isSession(id: String): Boolean = id in sessions

    /** Runs the session operation [name] (on the session [target], or with the `session` argument) over [events] of the client. */
    fun execute(name: String, target: String, args: JsonObject, events: (String) -> List<MooringEvent>) {
        when (name) {
            "endSession" -> (sessions[target] ?: invalidTest("endSession on '$target', which is not a session entity")).close()
            "assertSessionDirty" -> expectThat(argument(args)!!.isDirty) { "session ${args["session"]} is not dirty" }
            "assertSessionNotDirty" -> expectThat(!argument(args)!!.isDirty) { "session ${args["session"]} is dirty" }
            "assertSameLsidOnLastTwoCommands", "assertDifferentLsidOnLastTwoCommands" -> {
                val started = events(args["client"]!!.jsonPrimitive.content).filterIsInstance<CommandStartedEvent>()
                expectThat(started.size >= 2) { "$name needs two commands, the client saw ${started.size}" }
                val (a, b) = started.takeLast(2).map { it.command["lsid"] }
                if (name == "assertSameLsidOnLastTwoCommands") expectThat(a != null && a == b) { "lsids differ: $a, $b" } else expectThat(a != b) { "same lsid $a" }
            }
            else -> throw UnsupportedOperationException("session operation $name")
        }
    }

    /** [expected] with every `{$$sessionLsid: id}` replaced by that session's lsid document. */
    fun resolve(expected: JsonElement): JsonElement = when (expected) {
        is JsonObject -> {
            val id = (expected["\$\$sessionLsid"] as? JsonPrimitive)?.content
            if (id != null && expected.size == 1) {
                Json.parseToJsonElement(lsids[id] ?: invalidTest("\$\$sessionLsid names '$id', which is not a session entity"))
            } else {
                JsonObject(expected.mapValues { resolve(it.value) })
            }
        }
        is JsonArray -> JsonArray(expected.map { resolve(it) })
        else -> expected
    }

    /** Ends every session (at the end of a test). */
    fun endAll() {
        sessions.values.forEach { it.close() }
    }

    companion object {
        /** The operations [execute] runs. */
        val OPERATIONS: Set<String> = setOf(
            "endSession", "assertSessionDirty", "assertSessionNotDirty", "assertSameLsidOnLastTwoCommands", "assertDifferentLsidOnLastTwoCommands",
        )
    }
}
