package dev.mooring.spec.unified

import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive

/**
 * The checks the runner makes of an operation's arguments before it runs the operation
 * (unified-test-format.md "Executing an Operation"): the arguments the format and the API specs
 * (crud.md, run-command.md, the special test operations) make required must be present, and the
 * enum-valued options must hold one of their values — `returnDocument` ("Before"/"After",
 * case-insensitively, "findOneAndReplace and findOneAndUpdate"), `cursorType`, `timeoutMode`; a
 * special test operation, and an entity operation the format itself defines, takes no argument
 * but its own ("If a key in operation.arguments does not correspond to a known parameter/option
 * for the operation, the test runner MUST raise an error for an unsupported argument"). The CRUD
 * helpers' options are not checked here yet.
 * A violation is the file's error ([UnifiedTestFailure.InvalidTestFile]), raised even under
 * `ignoreResultAndError`. Pure.
 */
object OperationArguments {
    private val FIND = listOf("filter")

    /** The required arguments of each operation. */
    private val REQUIRED: Map<String, List<String>> = mapOf(
        "insertOne" to listOf("document"), "insertMany" to listOf("documents"),
        "updateOne" to listOf("filter", "update"), "updateMany" to listOf("filter", "update"),
        "replaceOne" to listOf("filter", "replacement"), "deleteOne" to FIND, "deleteMany" to FIND,
        "findOneAndUpdate" to listOf("filter", "update"), "findOneAndReplace" to listOf("filter", "replacement"),
        "findOneAndDelete" to FIND, "find" to FIND, "findOne" to FIND, "createFindCursor" to FIND,
        "aggregate" to listOf("pipeline"), "countDocuments" to FIND, "distinct" to listOf("fieldName", "filter"),
        "bulkWrite" to listOf("requests"), "clientBulkWrite" to listOf("models"),
        "createIndex" to listOf("keys"), "dropIndex" to listOf("name"),
        "createCollection" to listOf("collection"), "dropCollection" to listOf("collection"),
        "runCommand" to listOf("command", "commandName"), "runCursorCommand" to listOf("command", "commandName"),
        "createCommandCursor" to listOf("command", "commandName"),
        // special test operations
        "createEntities" to listOf("entities"), "failPoint" to listOf("client", "failPoint"),
        "targetedFailPoint" to listOf("session", "failPoint"), "wait" to listOf("ms"),
        "waitForEvent" to listOf("client", "event", "count"), "assertEventCount" to listOf("client", "event", "count"),
        "runOnThread" to listOf("thread", "operation"), "waitForThread" to listOf("thread"),
        "recordTopologyDescription" to listOf("client", "id"), "assertTopologyType" to listOf("topologyDescription", "topologyType"),
        "waitForPrimaryChange" to listOf("client", "priorTopologyDescription"),
        "assertNumberConnectionsCheckedOut" to listOf("client", "connections"),
        "assertSessionDirty" to listOf("session"), "assertSessionNotDirty" to listOf("session"),
        "assertSameLsidOnLastTwoCommands" to listOf("client"), "assertDifferentLsidOnLastTwoCommands" to listOf("client"),
        "appendMetadata" to listOf("driverInfoOptions"),
    )

    /** The enum-valued options and their values (compared case-insensitively). */
    private val ENUMS: Map<String, Set<String>> = mapOf(
        "returnDocument" to setOf("before", "after"),
        "cursorType" to setOf("nontailable", "tailable", "tailableawait"),
        "timeoutMode" to setOf("cursorlifetime", "iteration"),
    )

    /**
     * Every argument of the special test operations ("Special Test Operations" lists each one's
     * arguments exactly): another one is an unsupported argument.
     */
    private val SPECIAL: Map<String, Set<String>> = mapOf(
        "failPoint" to setOf("failPoint", "client"), "targetedFailPoint" to setOf("failPoint", "session"),
        "assertSessionTransactionState" to setOf("session", "state"), "assertSessionPinned" to setOf("session"),
        "assertSessionUnpinned" to setOf("session"), "assertDifferentLsidOnLastTwoCommands" to setOf("client"),
        "assertSameLsidOnLastTwoCommands" to setOf("client"), "assertSessionDirty" to setOf("session"),
        "assertSessionNotDirty" to setOf("session"), "assertCollectionExists" to setOf("databaseName", "collectionName"),
        "assertCollectionNotExists" to setOf("databaseName", "collectionName"),
        "assertIndexExists" to setOf("databaseName", "collectionName", "indexName"),
        "assertIndexNotExists" to setOf("databaseName", "collectionName", "indexName"), "createEntities" to setOf("entities"),
        "assertNumberConnectionsCheckedOut" to setOf("client", "connections"), "runOnThread" to setOf("thread", "operation"),
        "waitForThread" to setOf("thread"), "waitForEvent" to setOf("client", "event", "count"),
        "assertEventCount" to setOf("client", "event", "count"), "recordTopologyDescription" to setOf("client", "id"),
        "assertTopologyType" to setOf("topologyDescription", "topologyType"),
        "waitForPrimaryChange" to setOf("client", "priorTopologyDescription", "timeoutMS"), "wait" to setOf("ms"),
    )

    /** Every argument of the entity operations of the format's own (cursor iteration and close, endSession, appendMetadata). */
    private val ENTITY: Map<String, Set<String>> = mapOf(
        "iterateUntilDocumentOrError" to emptySet(), "iterateOnce" to emptySet(), "close" to setOf("timeoutMS"),
        "endSession" to emptySet(), "appendMetadata" to setOf("driverInfoOptions"),
    )

    /**
     * Raises [UnifiedTestFailure.InvalidTestFile] when [args] of the operation [name] lack a required
     * argument, misuse an enum, or hold an argument the operation has not (a special test operation,
     * [special], or one of the format's own entity operations).
     */
    fun requireValid(name: String, args: JsonObject, special: Boolean = false) {
        (if (special) SPECIAL[name] else ENTITY[name])?.let { known ->
            (args.keys - known).firstOrNull()?.let { invalidTest("operation $name: unsupported argument '$it'") }
        }
        REQUIRED[name]?.firstOrNull { it !in args }?.let { invalidTest("operation $name: the required argument '$it' is missing") }
        for ((option, values) in ENUMS) {
            val v = args[option] ?: continue
            val s = (v as? JsonPrimitive)?.takeIf { it.isString }?.content
            if (s == null || s.lowercase() !in values) invalidTest("operation $name: $option $v is none of its enum values ${values.joinToString()}")
        }
    }
}
