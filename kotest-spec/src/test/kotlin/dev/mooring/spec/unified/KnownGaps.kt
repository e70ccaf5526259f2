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

    private const val RAW_DATA = "uses the rawData option, which crud.md reserves for MongoDB's internal use (time-series " +
        "namespaces) and says drivers SHOULD NOT implement unless asked to: Mooring does not offer it"

    private const val CLIENT_BULK_WRITE_STAND_IN = "checks the client bulk write API (bulk-write.md: %s); Mooring has no client " +
        "bulk write helper yet (issue 30), and the runner's command stand-in does not implement the helper's own rules"

    private const val NO_INTERRUPTED_RESULT = "expects the intermediary result of a bulk write interrupted by a network error; " +
        "crud.md makes BulkWriteException.writeResult NOT REQUIRED, and Mooring's bulkWrite rethrows a non-write error as it is " +
        "(its type and error labels intact), reporting partial results only with write errors (MongoBulkWriteException)"

    private val gaps = mapOf(
        ("client bulkWrite errors" to "Requesting unacknowledged write with ordered is a client-side error") to
            CLIENT_BULK_WRITE_STAND_IN.format("an unacknowledged ordered write is refused before sending"),
        ("client bulkWrite errors" to "Requesting unacknowledged write with verboseResults is a client-side error") to
            CLIENT_BULK_WRITE_STAND_IN.format("an unacknowledged write with verboseResults is refused before sending"),
        ("client bulkWrite replaceOne-sort" to "client bulkWrite replaceOne with sort option") to CLIENT_BULK_WRITE_STAND_IN.format("the sort option"),
        ("client bulkWrite updateOne-sort" to "client bulkWrite updateOne with sort option") to CLIENT_BULK_WRITE_STAND_IN.format("the sort option"),
        ("client bulkWrite update options" to "client bulkWrite update with upsert") to CLIENT_BULK_WRITE_STAND_IN.format("the upsert option's result"),
        ("bulkWrite" to "First insertOne is never committed") to NO_INTERRUPTED_RESULT,
        ("bulkWrite" to "Second updateOne is never committed") to NO_INTERRUPTED_RESULT,
        ("bulkWrite" to "Third updateOne is never committed") to NO_INTERRUPTED_RESULT,
        ("runCursorCommand" to "Non-tailable cursor iteration timeoutMS is refreshed for getMore if timeoutMode is iteration - failure") to
            ITERATION_BLOCK_SHORTER,
        ("runCursorCommand" to "Tailable cursor iteration timeoutMS is refreshed for getMore - failure") to ITERATION_BLOCK_SHORTER,
        ("runCursorCommand" to "Tailable cursor awaitData iteration timeoutMS is refreshed for getMore - failure") to ITERATION_BLOCK_SHORTER,
        ("connection-pool-options" to "waitQueueSize should be included in connection pool created message when specified") to
            NO_LEGACY_WAIT_QUEUE.format("waitQueueSize"),
        ("connection-pool-options" to "waitQueueMultiple should be included in connection pool created message when specified") to
            NO_LEGACY_WAIT_QUEUE.format("waitQueueSize (the test's waitQueueMultiple case)"),
    )

    private const val GRIDFS = "needs GridFS (%s %s): Mooring has no GridFS API"
    private const val ENCRYPTION = "needs client-side encryption (%s %s): Mooring has no encryption support"
    private const val TRANSACTIONS = "needs transactions (%s %s): Mooring has sessions but no transactions (and so no " +
        "transaction-pinned connections in load-balanced mode)"
    private const val SESSION_OPTIONS = "needs session options (%s %s): Mooring's sessions have no snapshot reads, causal " +
        "consistency or default transaction options"

    private const val SEARCH_INDEXES = "needs search index management (%s %s): the driver module has the helpers " +
        "(createSearchIndex(es), updateSearchIndex, dropSearchIndex, listSearchIndexes; the driver's IndexManagementSpec tests them on " +
        "scripted replies), but the runner does not call them yet, and the test kit answers no search index command as a " +
        "server without Atlas Search does (issue 30)"

    private val features = mapOf(
        "operation" to mapOf(
            "createSearchIndex" to SEARCH_INDEXES, "createSearchIndexes" to SEARCH_INDEXES, "updateSearchIndex" to SEARCH_INDEXES,
            "dropSearchIndex" to SEARCH_INDEXES, "listSearchIndexes" to SEARCH_INDEXES,
            "startTransaction" to TRANSACTIONS, "commitTransaction" to TRANSACTIONS, "abortTransaction" to TRANSACTIONS,
            "withTransaction" to TRANSACTIONS, "assertSessionTransactionState" to TRANSACTIONS, "assertSessionPinned" to TRANSACTIONS,
            "assertSessionUnpinned" to TRANSACTIONS,
        ),
        "sessionOptions" to mapOf("snapshot" to SESSION_OPTIONS, "causalConsistency" to SESSION_OPTIONS, "defaultTransactionOptions" to SESSION_OPTIONS),
        "entity" to mapOf("bucket" to GRIDFS, "clientEncryption" to ENCRYPTION),
        "runOnRequirements" to mapOf("csfle" to ENCRYPTION),
        "client" to mapOf("autoEncryptOpts" to ENCRYPTION),
    )

    /**
     * The reason a test needing the [kind] (`operation`, `entity`, `sessionOptions`, `runOnRequirements`,
     * `client` field) [name] cannot run on Mooring, when it is a missing library feature.
     */
    fun missingFeature(kind: String, name: String): String? = features[kind]?.get(name)?.format(kind, name)

    /**
     * CRUD helpers sent through runCommand, by the driver (updateMany, deleteMany) or by the runner's remaining
     * stand-ins (index and collection management, mapReduce) (they are neither retryable reads nor
     * retryable writes, and must not be sent as such: a multi-statement write or an index or
     * collection command with a `txnNumber` is refused by the server, and runRetryableWrite would
     * retry them): their operation span is runCommand's ("runCommand db"), where a driver with the
     * helper names it after the helper.
     */
    private val SENT_WITH_RUN_COMMAND = setOf(
        "createCollection", "modifyCollection", "dropCollection", "createIndex", "dropIndex", "dropIndexes", "deleteMany", "updateMany", "mapReduce",
    )

    /**
     * Commands the runner sends through runCursorCommand as given: Mooring names that operation
     * span after the command (`find db.coll`, as the find, aggregate and list helpers built on it
     * need), where the unified `runCursorCommand` / `createCommandCursor` expect the driver's
     * runCommand operation (`runCommand db`).
     */
    private val CURSOR_COMMAND = setOf("runCursorCommand", "createCommandCursor")

    /**
     * Operations of the open-telemetry suite whose operation span Mooring produces as a driver
     * names it: the CRUD helpers sent as retryable reads and writes or cursor commands (their
     * span is named after the command, which is the helper's operation name), runCommand (sent
     * with Mooring's runCommand: "runCommand db"), a find cursor and its iteration (each getMore
     * an operation span of its own) and the test runner's fail points.
     */
    private val TRACED = CrudOperations.OPERATIONS - SENT_WITH_RUN_COMMAND +
        (CursorOperations.OPERATIONS - CURSOR_COMMAND) + "close" + "failPoint"

    private const val NO_CRUD_HELPER = "needs the CRUD helper(s) %s: an operation span is named after its helper (open-telemetry.md's covered " +
        "operations), and Mooring has no %s helper: such a command document can only be sent through runCommand, whose operation " +
        "span is 'runCommand db'"

    /**
     * The runner sends a client bulk write through runRetryableWrite (span `bulkWrite admin`, as
     * drivers name it) unless a model is an updateMany or deleteMany (not retryable: runCommand).
     */
    private fun tracedAsDriversDo(operation: JsonObject): Boolean {
        val name = operation["name"]!!.jsonPrimitive.content
        if (name != "clientBulkWrite") return name in TRACED
        val models = operation["arguments"]?.jsonObject?.get("models")?.jsonArray ?: return true
        return models.none { m -> m.jsonObject.keys.any { it == "updateMany" || it == "deleteMany" } }
    }

    private const val MULTI_CLIENT_BULK_WRITE = "expects the client bulk write's operation span to be 'bulkWrite admin'; its " +
        "updateMany/deleteMany models make it a non-retryable write, which Mooring can only send through runCommand (span " +
        "'runCommand admin'), having no client bulk write helper"

    private const val CURSOR_COMMAND_NAMED_AFTER_COMMAND = "expects the operation span of %s to be named runCommand; Mooring's " +
        "runCursorCommand names it after the command it opens the cursor with (its find, aggregate and list helpers rely on that)"

    private const val TEST_KIT_STAGE = "runs the aggregation stage %s (statistics of a real storage engine), which the test kit's " +
        "in-process server does not have; the test runs against a deployment given by MONGODB_URI"

    /** Aggregation stages the test kit's server does not implement (server statistics, not data). */
    private val STAGES_THE_TEST_KIT_LACKS = listOf("\$collStats")

    private const val TEST_KIT_ENGINE = "needs %s, which the test kit's in-process data engine does not implement; the test runs " +
        "against a deployment given by MONGODB_URI"

    /**
     * Server features the test kit's data engine lacks, each found by a JSON fragment of an
     * operation's arguments (never of expected results: `$$type` is no `$type`) among the
     * operations it concerns (null: any).
     */
    private val ENGINE_FEATURES: List<Triple<String, Set<String>?, String>> = listOf(
        // the client bulk write's collation cases pass on the engine's plain comparison
        Triple("\"collation\":", CrudOperations.OPERATIONS, "collation (locale-aware string comparison)"),
        Triple("\"arrayFilters\":", null, "arrayFilters (the filtered positional operator \$[identifier])"),
        Triple("\"let\":", null, "let variables (\$\$var) and \$expr in queries and updates"),
        Triple("{\"\$expr\":", null, "the \$expr query operator"),
        Triple("{\"\$setField\":", null, "the \$setField/\$getField/\$literal expressions in update pipelines (dotted and dollar-prefixed field names)"),
        Triple("{\"\$replaceWith\":", null, "the \$replaceWith stage in update pipelines (dotted and dollar-prefixed field names)"),
        Triple("{\"\$type\":", null, "the \$type query operator"),
        // the engine has $addFields in update pipelines, not as an aggregation stage
        Triple("{\"\$addFields\":", setOf("aggregate"), "the \$addFields aggregation stage"),
        // a view is created with createCollection's viewOn (a change stream's $project may name a field viewOn too)
        Triple("\"viewOn\":", setOf("createCollection"), "views (createCollection viewOn)"),
        Triple("{\"collMod\":", setOf("runCommand"), "the collMod command"),
        Triple("{\"shardCollection\":", setOf("runCommand"), "shardCollection (the sharded cluster simulator has routers and no shards)"),
        Triple("", setOf("modifyCollection"), "the collMod command (modifyCollection)"),
    )

    private const val OLD_SERVER_ERROR = "expects a MongoDB %s server to refuse an option (a server-side error); the test kit " +
        "simulates an older server by its wire version only and its engine accepts the option; the test runs against a deployment " +
        "given by MONGODB_URI"

    private const val UPDATE_SORT = "needs the sort option of an update or replace statement (MongoDB 8.0), which the test kit's " +
        "in-process data engine ignores; the test runs against a deployment given by MONGODB_URI"

    private const val INDEX_ERRORS = "needs unique index and document validation errors on findAndModify (DuplicateKey keyPattern/keyValue, " +
        "errInfo), which the test kit's in-process data engine does not report; the test runs against a deployment given by MONGODB_URI"

    private const val SECONDARY_WRITE_STAGE = "sends a \$out/\$merge aggregate to a secondary of a MongoDB 5.0+ replica set, which " +
        "a real secondary runs by writing through the primary; the test kit's secondaries refuse it (NotWritablePrimary); the test " +
        "runs against a deployment given by MONGODB_URI"

    /** Single cases the test kit cannot host, by the file's and the test's descriptions. */
    /** Cases that expect an old server to refuse an option the test kit's version simulation accepts (by file and test). */
    private val OLD_SERVER_CASES: Set<Pair<String, String>> = setOf(
        "aggregate" to "aggregate with a document comment - pre 4.4",
        "change-streams" to "Test with document comment - pre 4.4",
        "BulkWrite updateOne-sort" to "BulkWrite updateOne with sort option unsupported (server-side error)",
        "countDocuments-comment" to "countDocuments with document comment on less than 4.4.0 - server error",
        "deleteMany-comment" to "deleteMany with comment - pre 4.4",
        "deleteOne-comment" to "deleteOne with comment - pre 4.4",
        "deleteOne-hint-serverError" to "DeleteOne with hint string unsupported (server-side error)",
        "deleteOne-hint-serverError" to "DeleteOne with hint document unsupported (server-side error)",
        "distinct-comment" to "distinct with document comment - pre 4.4, server error",
        "estimatedDocumentCount-comment" to "estimatedDocumentCount with document comment - pre 4.4.14, server error",
        "find-allowdiskuse-serverError" to "Find fails when allowDiskUse true is specified against pre 4.4 server (server-side error)",
        "find-allowdiskuse-serverError" to "Find fails when allowDiskUse false is specified against pre 4.4 server (server-side error)",
        "find-comment" to "find with document comment - pre 4.4",
        "findOneAndDelete-comment" to "findOneAndDelete with comment - pre 4.4",
        "findOneAndReplace-dots_and_dollars" to "Replacing document with dollar-prefixed key in embedded doc on pre-5.0 server yields server-side error",
        "findOneAndUpdate-comment" to "findOneAndUpdate with comment - pre 4.4",
        "findOneAndUpdate-hint-serverError" to "FindOneAndUpdate with hint string unsupported (server-side error)",
        "findOneAndUpdate-hint-serverError" to "FindOneAndUpdate with hint document unsupported (server-side error)",
        "insertOne-comment" to "insertOne with comment - pre 4.4",
        "insertOne-dots_and_dollars" to "Inserting document with top-level dollar-prefixed key on pre-5.0 server yields server-side error",
        "replaceOne-comment" to "ReplaceOne with comment - pre 4.4",
        "replaceOne-sort" to "replaceOne with sort option unsupported (server-side error)",
        "updateMany-comment" to "UpdateMany with comment - pre 4.4",
        "updateOne-comment" to "UpdateOne with comment - pre 4.4",
        "updateOne-sort" to "updateOne with sort option unsupported (server-side error)",
    )

    private val TEST_KIT_CASES = mapOf(
        ("aggregate-write-readPreference" to "Aggregate with \$out includes read preference for 5.0+ server") to SECONDARY_WRITE_STAGE,
        ("aggregate-write-readPreference" to "Aggregate with \$merge includes read preference for 5.0+ server") to SECONDARY_WRITE_STAGE,
        ("findOneAndReplace-dots_and_dollars" to "Replacing document with top-level dotted key on 3.6+ server") to TEST_KIT_ENGINE.format(
            "storing a replacement with a top-level dotted field name (the engine refuses the name, UnknownError 8)",
        ),
        ("aggregate-out-readConcern" to "readConcern linearizable with out stage") to TEST_KIT_ENGINE.format(
            "refusing a linearizable read concern on an aggregate with \$out (a server-side error)",
        ),
    )

    /**
     * The reason [test] cannot run on the in-process test kit though Mooring could run it on a
     * real deployment (a server feature the kit does not simulate), or null.
     */
    fun testKitReason(file: JsonObject, test: JsonObject): String? {
        TEST_KIT_CASES[file["description"]?.jsonPrimitive?.content to test["description"]?.jsonPrimitive?.content]?.let { return it }
        val operations = test["operations"]!!.jsonArray.map { it.jsonObject }
        val text = operations.joinToString(",") { (it["arguments"] ?: JsonObject(emptyMap())).toString() }
        STAGES_THE_TEST_KIT_LACKS.firstOrNull { "{\"$it\":" in text }?.let { return TEST_KIT_STAGE.format(it) }
        ENGINE_FEATURES.firstOrNull { (fragment, names, _) ->
            operations.any { op -> (names == null || op["name"]?.jsonPrimitive?.content in names) && fragment in (op["arguments"] ?: JsonObject(emptyMap())).toString() }
        }?.let { return TEST_KIT_ENGINE.format(it.third) }
        val names = operations.mapNotNull { it["name"]?.jsonPrimitive?.content }.toSet()
        if ("clusteredIndex" in text && ("listCollections" in names || "listIndexes" in names)) return TEST_KIT_ENGINE.format("clustered collections (clusteredIndex) in listCollections and listIndexes")
        if (operations.any { op -> "\"document\":{\"_id\":{\"\$" in op["arguments"].toString() && op.containsKey("expectError") }) {
            return TEST_KIT_ENGINE.format("refusing a dollar-prefixed field name in _id (a server-side validation)")
        }
        if (operations.any { op -> "{\"\$merge\":" in op["arguments"].toString() && op["expectError"]?.jsonObject?.containsKey("errorResponse") == true }) {
            return TEST_KIT_ENGINE.format("the \$merge stage's duplicate key errors (keyPattern/keyValue in the error reply)")
        }
        // a server-side error expected of an old server: named cases only (a pattern here could hide a held-out failure)
        if ((file["description"]?.jsonPrimitive?.content to test["description"]?.jsonPrimitive?.content) in OLD_SERVER_CASES) {
            val maxVersion = listOfNotNull(test["runOnRequirements"], file["runOnRequirements"]).flatMap { it.jsonArray }
                .firstNotNullOfOrNull { it.jsonObject["maxServerVersion"]?.jsonPrimitive?.content }
            return OLD_SERVER_ERROR.format("${maxVersion ?: "an older"} or older")
        }
        val updateSort = operations.any { op ->
            val name = op["name"]?.jsonPrimitive?.content
            val args = op["arguments"] as? JsonObject
            (name in setOf("updateOne", "replaceOne") && args?.containsKey("sort") == true) ||
                (name == "bulkWrite" && args?.get("requests")?.jsonArray?.any { r -> r.jsonObject.values.any { it.jsonObject.containsKey("sort") } } == true)
        }
        if (updateSort) return UPDATE_SORT
        if (operations.any { op -> op["name"]?.jsonPrimitive?.content == "findOneAndUpdate" && op["expectError"]?.jsonObject?.containsKey("errorResponse") == true }) return INDEX_ERRORS
        return null
    }

    /** The reason [test] of [file] cannot pass on Mooring, or null. */
    fun reason(file: JsonObject, test: JsonObject): String? {
        gaps[file["description"]?.jsonPrimitive?.content to test["description"]?.jsonPrimitive?.content]?.let { return it }
        // crud.md: "Drivers SHOULD NOT implement this option unless asked to do so" (internal, for time-series namespaces)
        if (test["operations"]!!.jsonArray.any { op -> (op.jsonObject["arguments"] as? JsonObject)?.containsKey("rawData") == true }) return RAW_DATA
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
            if (missing == listOf("clientBulkWrite")) return MULTI_CLIENT_BULK_WRITE
            if (missing.isNotEmpty()) return NO_CRUD_HELPER.format(missing.joinToString(", "), missing.joinToString(" or "))
        }
        Regex("\"sessionOptions\":\\{\"(\\w+)\"").findAll(file.toString() + text).forEach { m -> missingFeature("sessionOptions", m.groupValues[1])?.let { return it } }
        return null
    }
}
