package dev.mooring.testkit.server

import org.bson.BsonArray
import org.bson.BsonDocument

/**
 * The search index commands (`createSearchIndexes`, `updateSearchIndex`, `dropSearchIndex`) and
 * the `$listSearchIndexes` aggregation stage, answered as a mongod without Atlas Search (no
 * `mongotHost` configured; MongoDB 7.0.5+ and 8.0) answers them: SearchNotEnabled (31082) with the
 * server's message, which names Atlas. Pure.
 */
internal object SearchIndexCommands {
    private const val SEARCH_NOT_ENABLED = 31082

    /** The commands answered here. */
    val COMMANDS: Set<String> = setOf("createSearchIndexes", "updateSearchIndex", "dropSearchIndex")

    /** True when [cmd] is one of [COMMANDS] or an aggregate whose pipeline starts with `$listSearchIndexes`. */
    fun matches(cmd: BsonDocument): Boolean = cmd.firstKey in COMMANDS ||
        (cmd.firstKey == "aggregate" && ((cmd["pipeline"] as? BsonArray)?.firstOrNull() as? BsonDocument)?.containsKey("\$listSearchIndexes") == true)

    /** mongod's refusal without Atlas Search. */
    fun reply(): BsonDocument = WireServer.error(
        SEARCH_NOT_ENABLED, "SearchNotEnabled",
        "Using Atlas Search Database Commands and the \$listSearchIndexes aggregation stage requires additional configuration. " +
            "Please connect to Atlas or an AtlasCLI local deployment to enable. For more information on how to connect, see " +
            "https://dochub.mongodb.org/core/atlas-cli-deploy-local-reqs.",
    )
}
