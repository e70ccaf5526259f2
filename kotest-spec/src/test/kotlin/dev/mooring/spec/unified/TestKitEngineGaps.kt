package dev.mooring.spec.unified

import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.jsonPrimitive

/**
 * The one home of the unified tests the in-process test kit cannot host, per case: the file's and
 * the test's descriptions, each with the [Gap] naming the server feature the test kit (its data
 * engine, mongo-java-server's memory backend, or its simulation of topologies and versions)
 * lacks. The test kit refuses such a command as a server that does not know it would (its
 * `UnsupportedFeatures`) rather than answer wrongly, so each listed case fails when run; they run
 * against an external deployment (`MONGODB_URI`). No pattern: a case not listed here runs, so a
 * new or held-out test is never skipped by accident.
 *
 * With `-D$RUN_LISTED_PROPERTY=true` no case is skipped for the test kit: a run that checks each
 * listed case still fails (a listed case that passes must leave the list).
 */
object TestKitEngineGaps {
    /** The system property that runs the listed cases instead of skipping them. */
    const val RUN_LISTED_PROPERTY = "mooring.testKitGaps.run"

    /** A server feature the test kit lacks; [reason] is the skip reason of the cases that need it. */
    enum class Gap(val feature: String) {
        COLLATION("collations (locale-aware string comparison)"),
        SET_FIELD("the expression operators \$setField and \$getField (MongoDB 5.0), which the update pipelines of these tests use"),
        CAPPED("capped collections"),
        SECONDARY_WRITE_STAGE("secondaries that run a \$out/\$merge aggregate by writing through the primary (MongoDB 5.0+)"),
        COLL_MOD("the collMod command (modifyCollection)"),
        MAP_REDUCE("the mapReduce command"),
        CLUSTERED_LISTING("clustered collections (clusteredIndex) in listCollections and listIndexes"),
        VIEWS("views (createCollection viewOn)"),
        FIND_AND_MODIFY_ERRORS("findAndModify's duplicate key and document validation error details (keyPattern/keyValue, errInfo)"),
        RETURN_KEY("the find options returnKey and showRecordId"),
        LISTING_FILTER("a filter on listCollections and listDatabases"),
        DOCUMENTS_STAGE("the \$documents aggregation stage"),
        DOTTED_REPLACEMENT("storing a replacement document with a top-level dotted field name"),
        LINEARIZABLE_OUT("refusing a linearizable read concern on an aggregate with \$out"),
        DOLLAR_ID("refusing a dollar-prefixed field name in _id"),
        SHARD_COLLECTION("shardCollection (the sharded cluster simulator has routers and no shards)"),
        DOTTED_PROJECTION("a \$project stage that sets a dotted path to a value (the engine takes it as a field name)"),
        NS_TYPE("the nsType field of change events (MongoDB 8.1)");

        /** The skip reason: the feature named, and where such a test runs. */
        val reason: String get() = "needs $feature, which the test kit's in-process server does not have; the test runs against a deployment given by MONGODB_URI"
    }

    private val LISTED: Map<Gap, List<Pair<String, String>>> = mapOf(
        Gap.COLLATION to listOf(
            "aggregate-collation" to "Aggregate with collation", // crud/aggregate-collation.json
            "bulkWrite-collation" to "BulkWrite with delete operations and collation", // crud/bulkWrite-collation.json
            "bulkWrite-collation" to "BulkWrite with update operations and collation", // crud/bulkWrite-collation.json
            "deleteMany-collation" to "DeleteMany when many documents match with collation", // crud/deleteMany-collation.json
            "findOneAndDelete-collation" to "FindOneAndDelete when one document matches with collation", // crud/findOneAndDelete-collation.json
            "findOneAndReplace-collation" to "FindOneAndReplace when one document matches with collation returning the document after modification", // crud/findOneAndReplace-collation.json
            "findOneAndUpdate-collation" to "FindOneAndUpdate when many documents match with collation returning the document before modification", // crud/findOneAndUpdate-collation.json
            "updateMany-collation" to "UpdateMany when many documents match with collation", // crud/updateMany-collation.json
        ),
        Gap.SET_FIELD to listOf(
            "bulkWrite-updateMany-dots_and_dollars" to "Updating document to set dollar-prefixed key in embedded doc on 5.0+ server", // crud/bulkWrite-updateMany-dots_and_dollars.json
            "bulkWrite-updateMany-dots_and_dollars" to "Updating document to set dotted key in embedded doc on 5.0+ server", // crud/bulkWrite-updateMany-dots_and_dollars.json
            "bulkWrite-updateMany-dots_and_dollars" to "Updating document to set top-level dollar-prefixed key on 5.0+ server", // crud/bulkWrite-updateMany-dots_and_dollars.json
            "bulkWrite-updateMany-dots_and_dollars" to "Updating document to set top-level dotted key on 5.0+ server", // crud/bulkWrite-updateMany-dots_and_dollars.json
            "bulkWrite-updateOne-dots_and_dollars" to "Updating document to set dollar-prefixed key in embedded doc on 5.0+ server", // crud/bulkWrite-updateOne-dots_and_dollars.json
            "bulkWrite-updateOne-dots_and_dollars" to "Updating document to set dotted key in embedded doc on 5.0+ server", // crud/bulkWrite-updateOne-dots_and_dollars.json
            "bulkWrite-updateOne-dots_and_dollars" to "Updating document to set top-level dollar-prefixed key on 5.0+ server", // crud/bulkWrite-updateOne-dots_and_dollars.json
            "bulkWrite-updateOne-dots_and_dollars" to "Updating document to set top-level dotted key on 5.0+ server", // crud/bulkWrite-updateOne-dots_and_dollars.json
            "findOneAndUpdate-dots_and_dollars" to "Updating document to set dollar-prefixed key in embedded doc on 5.0+ server", // crud/findOneAndUpdate-dots_and_dollars.json
            "findOneAndUpdate-dots_and_dollars" to "Updating document to set dotted key in embedded doc on 5.0+ server", // crud/findOneAndUpdate-dots_and_dollars.json
            "findOneAndUpdate-dots_and_dollars" to "Updating document to set top-level dollar-prefixed key on 5.0+ server", // crud/findOneAndUpdate-dots_and_dollars.json
            "findOneAndUpdate-dots_and_dollars" to "Updating document to set top-level dotted key on 5.0+ server", // crud/findOneAndUpdate-dots_and_dollars.json
            "updateMany-dots_and_dollars" to "Updating document to set dollar-prefixed key in embedded doc on 5.0+ server", // crud/updateMany-dots_and_dollars.json
            "updateMany-dots_and_dollars" to "Updating document to set dotted key in embedded doc on 5.0+ server", // crud/updateMany-dots_and_dollars.json
            "updateMany-dots_and_dollars" to "Updating document to set top-level dollar-prefixed key on 5.0+ server", // crud/updateMany-dots_and_dollars.json
            "updateMany-dots_and_dollars" to "Updating document to set top-level dotted key on 5.0+ server", // crud/updateMany-dots_and_dollars.json
        ),
        Gap.CAPPED to listOf(
            "timeoutMS behaves correctly for tailable non-awaitData cursors" to "error if timeoutMode is cursor_lifetime", // client-side-operations-timeout/tailable-non-awaitData.json
            "timeoutMS behaves correctly for tailable non-awaitData cursors" to "timeoutMS applied to find", // client-side-operations-timeout/tailable-non-awaitData.json
            "timeoutMS behaves correctly for tailable non-awaitData cursors" to "timeoutMS is refreshed for getMore - failure", // client-side-operations-timeout/tailable-non-awaitData.json
            "timeoutMS behaves correctly for tailable non-awaitData cursors" to "timeoutMS is refreshed for getMore - success", // client-side-operations-timeout/tailable-non-awaitData.json
            "collectionData-createOptions" to "collection is created with the correct options", // unified-test-format/valid-pass/collectionData-createOptions.json
        ),
        Gap.SECONDARY_WRITE_STAGE to listOf(
            "aggregate-write-readPreference" to "Aggregate with \$merge includes read preference for 5.0+ server", // crud/aggregate-write-readPreference.json
            "aggregate-write-readPreference" to "Aggregate with \$out includes read preference for 5.0+ server", // crud/aggregate-write-readPreference.json
            "db-aggregate-write-readPreference" to "Database-level aggregate with \$merge includes read preference for 5.0+ server", // crud/db-aggregate-write-readPreference.json
            "db-aggregate-write-readPreference" to "Database-level aggregate with \$out includes read preference for 5.0+ server", // crud/db-aggregate-write-readPreference.json
        ),
        Gap.COLL_MOD to listOf(
            "change-streams-showExpandedEvents" to "when showExpandedEvents is true, modify events are reported", // change-streams/change-streams-showExpandedEvents.json
            "modifyCollection-errorResponse" to "modifyCollection prepareUnique violations are accessible", // collection-management/modifyCollection-errorResponse.json
            "modifyCollection-pre_and_post_images" to "modifyCollection to changeStreamPreAndPostImages enabled", // collection-management/modifyCollection-pre_and_post_images.json
            "findOneAndUpdate-errorResponse" to "findOneAndUpdate document validation errInfo is accessible", // crud/findOneAndUpdate-errorResponse.json
        ),
        Gap.MAP_REDUCE to listOf(
            "default-write-concern-3.4" to "MapReduce omits default write concern", // read-write-concern/operation/default-write-concern-3.4.json
            "mapReduce" to "MapReduce succeeds with retry on", // retryable-reads/mapReduce.json
        ),
        Gap.CLUSTERED_LISTING to listOf(
            "clustered-indexes" to "listIndexes returns the index", // collection-management/clustered-indexes.json
        ),
        Gap.SHARD_COLLECTION to listOf(
            "change-streams-showExpandedEvents" to "when showExpandedEvents is true, shardCollection events are reported", // change-streams/change-streams-showExpandedEvents.json
        ),
        Gap.DOTTED_PROJECTION to listOf(
            "change-streams" to "Test new structure in ns document MUST NOT err", // change-streams/change-streams.json
        ),
        Gap.NS_TYPE to listOf(
            "change-streams-nsType" to "nsType is present when creating collections", // change-streams/change-streams-nsType.json
        ),
        Gap.VIEWS to listOf(
            "estimatedDocumentCount" to "estimatedDocumentCount works correctly on views", // crud/estimatedDocumentCount.json
            "change-streams-nsType" to "nsType is present when creating views", // change-streams/change-streams-nsType.json
        ),
        Gap.FIND_AND_MODIFY_ERRORS to listOf(
            "findOneAndUpdate-errorResponse" to "findOneAndUpdate DuplicateKey error is accessible", // crud/findOneAndUpdate-errorResponse.json
        ),
        Gap.RETURN_KEY to listOf(
            "find" to "A successful find with showRecordId and returnKey", // command-logging-and-monitoring/monitoring/find.json
        ),
        Gap.LISTING_FILTER to listOf(
            "clustered-indexes" to "listCollections includes clusteredIndex", // collection-management/clustered-indexes.json
        ),
        Gap.DOCUMENTS_STAGE to listOf(
            "aggregate-merge-errorResponse" to "aggregate \$merge DuplicateKey error is accessible", // crud/aggregate-merge-errorResponse.json
        ),
        Gap.DOTTED_REPLACEMENT to listOf(
            "findOneAndReplace-dots_and_dollars" to "Replacing document with top-level dotted key on 3.6+ server", // crud/findOneAndReplace-dots_and_dollars.json
        ),
        Gap.LINEARIZABLE_OUT to listOf(
            "aggregate-out-readConcern" to "readConcern linearizable with out stage", // crud/aggregate-out-readConcern.json
        ),
        Gap.DOLLAR_ID to listOf(
            "insertOne-dots_and_dollars" to "Inserting document with dollar-prefixed key in _id yields server-side error", // crud/insertOne-dots_and_dollars.json
        ),
    )

    /** Every listed case (file description to test description) with its gap; a case is listed once. */
    val cases: Map<Pair<String, String>, Gap> = LISTED.flatMap { (gap, cases) -> cases.map { it to gap } }.toMap()

    /** The number of list entries (equal to [cases]' size when no case is listed twice). */
    val entries: Int = LISTED.values.sumOf { it.size }

    /** The reason the in-process test kit cannot host [test] of [file], or null (always null under [RUN_LISTED_PROPERTY]). */
    fun reason(file: JsonObject, test: JsonObject): String? {
        if (System.getProperty(RUN_LISTED_PROPERTY) == "true") return null
        val key = file["description"]?.jsonPrimitive?.content to test["description"]?.jsonPrimitive?.content
        return cases[key]?.reason
    }
}
