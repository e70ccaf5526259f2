package dev.mooring.spec.unified

import dev.mooring.cmap.CommandStartedEvent
import dev.mooring.events.MooringEvent
import dev.mooring.sdam.ClientSession
import dev.mooring.sdam.ClientSessionOptions
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.TransactionOptions
import dev.mooring.sdam.withTransaction
import org.bson.BsonDocument
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import kotlinx.serialization.json.long

/**
 * The session entities and session operations of the unified format (unified-test-format.md):
 * `session` entities (explicit sessions from [MongoCluster.startSession]), `endSession`,
 * `assertSessionDirty` / `assertSessionNotDirty`, `assertSameLsidOnLastTwoCommands` /
 * `assertDifferentLsidOnLastTwoCommands`, and the `$$sessionLsid` matching operator (resolved
 * in expectations before matching), `sessionOptions` (causalConsistency, snapshot,
 * defaultTransactionOptions, defaultTimeoutMS), the transaction operations (`startTransaction`,
 * `commitTransaction`, `abortTransaction`, `withTransaction` whose callback operations run
 * through the runner, `assertSessionTransactionState`, `assertSessionPinned` /
 * `assertSessionUnpinned`) and `targetedFailPoint` (on the session's pinned mongos, through a
 * direct connection). One instance per test run; used from its coroutine.
 */
class SessionOperations {
    private val sessions = HashMap<String, ClientSession>()
    /** The lsid of each session, kept after the session ended (expectations name ended sessions too). */
    private val lsids = HashMap<String, String>()

    /** Each session entity's lsid `id` as a span's `db.mongodb.lsid` attribute carries it (its UUID string; open-telemetry.md). */
    private val lsidIds = HashMap<String, String>()

    /** Creates the session entity [id] of [cluster] as `createEntities` describes it in [spec]. */
    fun create(id: String, cluster: MongoCluster, spec: JsonObject, client: EntityOptions = EntityOptions()) {
        val options = sessionOptions(spec["sessionOptions"]?.jsonObject)
        // the client's uriOptions readConcernLevel and w are the runner's entity options (not the cluster's settings): its transactions inherit them
        val fromClient = TransactionOptions(
            client.readConcern?.getString("level", null)?.value,
            client.writeConcern?.let { DriverOptions.writeConcern(it) },
        )
        val session = cluster.startSession(options.copy(defaultTransactionOptions = options.defaultTransactionOptions.withDefaults(fromClient)))
        sessions[id] = session
        lsids[id] = session.lsid.toJson()
        lsidIds[id] = session.lsid["id"]?.takeIf { it.isBinary && it.asBinary().data.size == 16 }?.asBinary()?.asUuid()?.toString() ?: session.lsid["id"].toString()
    }

    /** The session entity named by the operation argument `session`, or null. */
    fun argument(args: JsonObject): ClientSession? = args["session"]?.jsonPrimitive?.content?.let {
        sessions[it] ?: invalidTest("the session argument '$it' is not a session entity")
    }

    /** True when [id] names a session entity. */
    fun isSession(id: String): Boolean = id in sessions

    /**
     * Runs the session operation [name] (on the session [target], or with the `session` argument)
     * over [events] of the client; [callback] runs a `withTransaction` callback operation (its
     * assertions made, its error propagated); [failPointOn] sets a fail point on one server.
     */
    suspend fun execute(
        name: String,
        target: String,
        args: JsonObject,
        events: (String) -> List<MooringEvent>,
        callback: suspend (JsonObject) -> Unit = { throw UnsupportedOperationException("withTransaction callback") },
        failPointOn: suspend (dev.mooring.events.ServerAddress, BsonDocument) -> Unit = { _, _ -> throw UnsupportedOperationException("targetedFailPoint") },
    ) {
        when (name) {
            "startTransaction" -> session(target).startTransaction(transactionOptions(args))
            "commitTransaction" -> session(target).commitTransaction(timeoutMS(name, args))
            "abortTransaction" -> session(target).abortTransaction(timeoutMS(name, args))
            "withTransaction" -> session(target).withTransaction(transactionOptions(JsonObject(args - "callback" - "timeoutMS")), args.long("timeoutMS")) {
                for (op in args["callback"]!!.jsonArray) callback(op.jsonObject)
            }
            "assertSessionTransactionState" -> argument(args)!!.transactionState.specName.let { state ->
                expectThat(state == args["state"]!!.jsonPrimitive.content) { "session ${args["session"]} is in transaction state $state, expected ${args["state"]}" }
            }
            "assertSessionPinned" -> expectThat(argument(args)!!.pinnedServer != null) { "session ${args["session"]} is not pinned" }
            "assertSessionUnpinned" -> expectThat(argument(args)!!.pinnedServer == null) { "session ${args["session"]} is pinned to ${argument(args)!!.pinnedServer}" }
            "targetedFailPoint" -> {
                val pinned = argument(args)!!.pinnedServer ?: invalidTest("targetedFailPoint: session ${args["session"]} is not pinned to a mongos")
                failPointOn(pinned, BsonDocument.parse(args["failPoint"]!!.toString()))
            }
            // the suspending endSession: a transaction in progress is aborted before the next operation's events are checked
            "endSession" -> (sessions[target] ?: invalidTest("endSession on '$target', which is not a session entity")).endSession()
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

    private fun session(id: String): ClientSession = sessions[id] ?: invalidTest("'$id' is not a session entity")

    /** The `timeoutMS` argument of commitTransaction/abortTransaction (another argument fails loudly). */
    private fun timeoutMS(name: String, args: JsonObject): Long? {
        (args.keys - "timeoutMS").firstOrNull()?.let { throw UnsupportedOperationException("$name argument $it") }
        return args.long("timeoutMS")
    }

    private fun JsonObject.long(key: String): Long? = this[key]?.jsonPrimitive?.content?.toLong()

    /** `sessionOptions` as the driver's (another field fails loudly). */
    private fun sessionOptions(o: JsonObject?): ClientSessionOptions {
        if (o == null) return ClientSessionOptions()
        (o.keys - setOf("causalConsistency", "snapshot", "defaultTransactionOptions", "defaultTimeoutMS")).firstOrNull()?.let { throw UnsupportedOperationException("session option $it") }
        return ClientSessionOptions(
            o["causalConsistency"]?.jsonPrimitive?.content?.toBooleanStrict(),
            o["snapshot"]?.jsonPrimitive?.content?.toBooleanStrict() ?: false,
            transactionOptions(o["defaultTransactionOptions"]?.jsonObject ?: JsonObject(emptyMap())),
            o.long("defaultTimeoutMS"),
        )
    }

    /** The transaction options of `startTransaction`, `withTransaction` and `defaultTransactionOptions` (another field fails loudly). */
    private fun transactionOptions(o: JsonObject): TransactionOptions {
        (o.keys - setOf("readConcern", "writeConcern", "readPreference", "maxCommitTimeMS", "session")).firstOrNull()?.let { throw UnsupportedOperationException("transaction option $it") }
        val rc = o["readConcern"]?.let { BsonDocument.parse(it.toString()) }
        rc?.let { (it.keys - "level").firstOrNull()?.let { k -> throw UnsupportedOperationException("readConcern field $k") } }
        val wc = o["writeConcern"]?.let { DriverOptions.writeConcern(BsonDocument.parse(it.toString())) }
        return TransactionOptions(
            rc?.getString("level", null)?.value,
            wc,
            o["readPreference"]?.jsonObject?.let { UnifiedReadPreference.parse(it) },
            o["maxCommitTimeMS"]?.jsonPrimitive?.long,
        )
    }

    /** [expected] (an `expectTracingMessages` entry) with every `{$$sessionLsid: id}` replaced by that session's lsid as span attributes carry it. */
    fun resolveForSpans(expected: JsonElement): JsonElement = when (expected) {
        is JsonObject -> {
            val id = (expected["\$\$sessionLsid"] as? JsonPrimitive)?.content
            if (id != null && expected.size == 1) {
                JsonPrimitive(lsidIds[id] ?: invalidTest("\$\$sessionLsid names '$id', which is not a session entity"))
            } else {
                JsonObject(expected.mapValues { resolveForSpans(it.value) })
            }
        }
        is JsonArray -> JsonArray(expected.map { resolveForSpans(it) })
        else -> expected
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
            "startTransaction", "commitTransaction", "abortTransaction", "withTransaction", "assertSessionTransactionState",
            "assertSessionPinned", "assertSessionUnpinned", "targetedFailPoint",
        )
    }
}
