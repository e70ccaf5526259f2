package dev.mooring.spec.unified

import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive

/**
 * Unified tests that assert behaviour Mooring deliberately lacks, with the exact reason. Keyed
 * by the file's and the test's descriptions, so a renamed or new test is never skipped by
 * accident.
 */
object KnownGaps {
    private const val NO_LEGACY_WAIT_QUEUE = "sets the legacy URI option %s and expects it in the 'Connection pool created' " +
        "message; connection-monitoring-and-pooling.md's table for that message says of waitQueueSize and waitQueueMultiple " +
        "\"Optional; only required to include if the driver supports this option and the user specified a value\", the " +
        "options are deprecated there (\"Why are waitQueueSize and waitQueueMultiple deprecated?\"), and Mooring does not " +
        "support them (its connection string parser warns about an unknown option and ignores it)"

    private const val ITERATION_BLOCK_SHORTER = "expects a timeout error from a getMore that the test's fail point blocks " +
        "for less than the fresh timeoutMS that client-side-operations-timeout.md (\"Cursors\": in ITERATION mode \"the original " +
        "timeoutMS value MUST also be applied to each next call\") gives each iteration, so a driver that follows the text " +
        "returns the batch (an upstream defect of the test, tracked by the specification project as DRIVERS-2965, where other " +
        "drivers skip these three cases too); unified-scenarios/csot-iteration-getmore.json and cursor-timeouts.json check the " +
        "rule with a getMore blocked past the timeout"

    private val gaps = mapOf(
        ("runCursorCommand" to "Non-tailable cursor iteration timeoutMS is refreshed for getMore if timeoutMode is iteration - failure") to
            ITERATION_BLOCK_SHORTER,
        ("runCursorCommand" to "Tailable cursor iteration timeoutMS is refreshed for getMore - failure") to ITERATION_BLOCK_SHORTER,
        ("runCursorCommand" to "Tailable cursor awaitData iteration timeoutMS is refreshed for getMore - failure") to ITERATION_BLOCK_SHORTER,
        ("connection-pool-options" to "waitQueueSize should be included in connection pool created message when specified") to
            NO_LEGACY_WAIT_QUEUE.format("waitQueueSize"),
        ("connection-pool-options" to "waitQueueMultiple should be included in connection pool created message when specified") to
            NO_LEGACY_WAIT_QUEUE.format("waitQueueSize (the test's waitQueueMultiple case)"),
    )

    private const val ENCRYPTION = "needs client-side encryption (%s %s): Mooring has no encryption support"
    private val features = mapOf(
        "entity" to mapOf("clientEncryption" to ENCRYPTION),
        "runOnRequirements" to mapOf("csfle" to ENCRYPTION),
        "client" to mapOf("autoEncryptOpts" to ENCRYPTION),
    )

    /**
     * The reason a test needing the [kind] (`operation`, `entity`, `sessionOptions`, `runOnRequirements`,
     * `client` field) [name] cannot run on Mooring, when it is a missing library feature.
     */
    fun missingFeature(kind: String, name: String): String? = features[kind]?.get(name)?.format(kind, name)

    /**
     * Operations the runner still sends through the generic runCommand (Mooring's driver has no
     * helper for them): their operation span is runCommand's ("runCommand db"), where a driver
     * with the helper names it after the helper. The driver's own helper commands (updateMany,
     * deleteMany, the index, search index and collection management writes, a client bulk write
     * with multi-document models) name their spans after the helper (`HelperCommand`).
     */
    private val SENT_WITH_RUN_COMMAND = setOf("modifyCollection", "mapReduce", "rename")

    /**
     * Commands the runner sends through runCursorCommand as given: Mooring names that operation
     * span after the command (`find db.coll`, as the find, aggregate and list helpers built on it
     * need), where the unified `runCursorCommand` / `createCommandCursor` expect the driver's
     * runCommand operation (`runCommand db`).
     */
    private val CURSOR_COMMAND = setOf("runCursorCommand", "createCommandCursor")

    /**
     * Operations of the open-telemetry suite whose operation span Mooring produces as a driver
     * names it: the CRUD helpers sent as retryable reads and writes, cursor commands or helper
     * commands (their span is named after the helper), runCommand (sent
     * with Mooring's runCommand: "runCommand db"), a find cursor and its iteration (each getMore
     * an operation span of its own) and the test runner's fail points.
     */
    private val TRACED = CrudOperations.OPERATIONS - SENT_WITH_RUN_COMMAND +
        (CursorOperations.OPERATIONS - CURSOR_COMMAND) + "close" + "failPoint" + "clientBulkWrite" +
        // a transaction's operations nest in its `transaction` span (open-telemetry.md "Transactions")
        setOf("startTransaction", "commitTransaction", "abortTransaction", "withTransaction")

    private const val NO_CRUD_HELPER = "needs the operation span of %s named after the helper (open-telemetry.md's covered " +
        "operations); Mooring's driver (or the runner's stand-in) sends the %s command through runCommand, whose operation " +
        "span is 'runCommand db'"

    /** The driver names each operation's span after the helper (its helper commands through `HelperCommand`). */
    private fun tracedAsDriversDo(operation: JsonObject): Boolean = operation["name"]!!.jsonPrimitive.content in TRACED

    private const val CURSOR_COMMAND_NAMED_AFTER_COMMAND = "expects the operation span of %s to be named runCommand; Mooring's " +
        "runCursorCommand names it after the command it opens the cursor with (its find, aggregate and list helpers rely on that)"

    /** The reason [test] of [file] cannot pass on Mooring, or null. */
    fun reason(file: JsonObject, test: JsonObject): String? {
        gaps[file["description"]?.jsonPrimitive?.content to test["description"]?.jsonPrimitive?.content]?.let { return it }
        // A missing library feature comes first: it is the deeper reason, whatever else the test asserts.
        val text = test.toString()
        Regex("\"name\":\"(\\w+)\",\"object\"").findAll(text).forEach { m -> missingFeature("operation", m.groupValues[1])?.let { return it } }
        Regex("\\{\"(\\w+)\":\\{\"id\"").findAll(file.toString() + text).forEach { m -> missingFeature("entity", m.groupValues[1])?.let { return it } }
        if ("\"autoEncryptOpts\":" in file.toString() + text) return missingFeature("client", "autoEncryptOpts")
        if (test.containsKey("expectTracingMessages")) {
            val names = test["operations"]!!.jsonArray.map { it.jsonObject["name"]!!.jsonPrimitive.content }
            names.filter { it in CURSOR_COMMAND }.distinct().takeIf { it.isNotEmpty() }?.let { return CURSOR_COMMAND_NAMED_AFTER_COMMAND.format(it.joinToString(" and ")) }
            // only operations the runner runs: one it does not know fails the test (unifiedCases), never skips it
            val missing = test["operations"]!!.jsonArray.map { it.jsonObject }.filterNot(::tracedAsDriversDo)
                .map { it["name"]!!.jsonPrimitive.content }.filter { it in UnifiedTestRun.SUPPORTED_OPERATIONS }.distinct()
            if (missing.isNotEmpty()) return NO_CRUD_HELPER.format(missing.joinToString(", "), missing.joinToString(" or "))
        }
        Regex("\"sessionOptions\":\\{\"(\\w+)\"").findAll(file.toString() + text).forEach { m -> missingFeature("sessionOptions", m.groupValues[1])?.let { return it } }
        return null
    }
}
