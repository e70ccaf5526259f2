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
            "listDatabases used); Mooring has no sessions and sends no endSessions, so its log has one checkout",
        ("connection-pool-options" to "waitQueueSize should be included in connection pool created message when specified") to
            NO_LEGACY_WAIT_QUEUE.format("waitQueueSize"),
        ("connection-pool-options" to "waitQueueMultiple should be included in connection pool created message when specified") to
            NO_LEGACY_WAIT_QUEUE.format("waitQueueSize (the test's waitQueueMultiple case)"),
    )

    /** The reason [test] of [file] cannot pass on Mooring, or null. */
    fun reason(file: JsonObject, test: JsonObject): String? =
        gaps[file["description"]?.jsonPrimitive?.content to test["description"]?.jsonPrimitive?.content]
}
