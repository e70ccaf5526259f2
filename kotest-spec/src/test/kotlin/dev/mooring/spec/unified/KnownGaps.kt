package dev.mooring.spec.unified

import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.jsonPrimitive

/**
 * Unified tests that assert behaviour Mooring deliberately lacks, with the exact reason. Keyed
 * by the file's and the test's descriptions, so a renamed or new test is never skipped by
 * accident.
 */
object KnownGaps {
    private const val NO_LEGACY_WAIT_QUEUE = "sets the legacy URI option %s and expects it in the 'Connection pool created' " +
        "message; Mooring does not support that option (its connection string parser warns about an unknown option and " +
        "ignores it), so the message lists only the pool options Mooring has"

    private val gaps = mapOf(
        ("connection-logging" to "Create a client, run a command, and close the client") to
            "expects a second checkout while the client closes (drivers send endSessions for the implicit session " +
            "listDatabases used); Mooring attaches implicit sessions only to runRetryableWrite and sends no endSessions " +
            "on close, so its log has one checkout",
        ("connection-pool-options" to "waitQueueSize should be included in connection pool created message when specified") to
            NO_LEGACY_WAIT_QUEUE.format("waitQueueSize"),
        ("connection-pool-options" to "waitQueueMultiple should be included in connection pool created message when specified") to
            NO_LEGACY_WAIT_QUEUE.format("waitQueueSize (the test's waitQueueMultiple case)"),
    )

    private const val CURSORS = "needs cursors (%s %s): Mooring is a pool and SDAM library with runCommand only; it has no " +
        "cursor API (getMore/killCursors, cursor-pinned connections in load-balanced mode)"
    private const val GRIDFS = "needs GridFS (%s %s): Mooring has no GridFS API"
    private const val ENCRYPTION = "needs client-side encryption (%s %s): Mooring has no encryption support"
    private const val CHANGE_STREAMS = "needs change streams (%s %s): Mooring has no change stream API"
    private const val SESSIONS = "needs sessions and transactions (%s %s): Mooring does not implement client sessions " +
        "(lsid, endSessions) nor transactions (and so no transaction-pinned connections in load-balanced mode)"

    private val features = mapOf(
        "operation" to mapOf(
            "createFindCursor" to CURSORS, "iterateUntilDocumentOrError" to CURSORS, "iterateOnce" to CURSORS,
            "createChangeStream" to CHANGE_STREAMS,
            "startTransaction" to SESSIONS, "commitTransaction" to SESSIONS, "abortTransaction" to SESSIONS,
            "endSession" to SESSIONS, "assertSameLsidOnLastTwoCommands" to SESSIONS,
        ),
        "entity" to mapOf("session" to SESSIONS, "bucket" to GRIDFS, "clientEncryption" to ENCRYPTION),
    )

    /** The reason a test needing the [kind] (`operation` or `entity`) [name] cannot run on Mooring, when it is a missing library feature. */
    fun missingFeature(kind: String, name: String): String? = features[kind]?.get(name)?.format(kind, name)

    /**
     * Whole files (by description) that need MongoCluster.runCursorCommand, which the `cursors`
     * work is adding: re-enable them when it is merged (CSOT's cursor timeouts apply to it).
     */
    private val needsCursorCommand = setOf(
        "tests for timeoutMS behavior that applies to all cursor types",
        "timeoutMS behaves correctly for non-tailable cursors",
        "timeoutMS behaves correctly for tailable non-awaitData cursors",
        "timeoutMS behaves correctly for tailable awaitData cursors",
    )

    /** The reason [test] of [file] cannot pass on Mooring, or null. */
    fun reason(file: JsonObject, test: JsonObject): String? {
        if (file["description"]?.jsonPrimitive?.content in needsCursorCommand) return "needs runCursorCommand (in progress)"
        gaps[file["description"]?.jsonPrimitive?.content to test["description"]?.jsonPrimitive?.content]?.let { return it }
        // A missing library feature comes first: it is the deeper reason, whatever else the test asserts.
        val text = test.toString()
        Regex("\"name\":\"(\\w+)\",\"object\"").findAll(text).forEach { m -> missingFeature("operation", m.groupValues[1])?.let { return it } }
        Regex("\\{\"(\\w+)\":\\{\"id\"").findAll(file.toString() + text).forEach { m -> missingFeature("entity", m.groupValues[1])?.let { return it } }
        return null
    }
}
