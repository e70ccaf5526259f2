package dev.mooring.testkit.server

import org.bson.BsonArray
import org.bson.BsonDocument

/**
 * The one JavaScript `$where` filter the spec tests use to make a find or update take a while:
 * `{$where: "sleep(N) || true"}`, or `"function() { sleep(N); return true; }"`. The server sleeps N milliseconds once (as mongod does on a
 * one-document collection: it evaluates the function per document) and the clause matches
 * every document. Any other `$where` is rejected with BadValue by [InMemoryCollections]. Pure.
 */
object WhereSleep {
    private val pattern = Regex(
        """^\s*(?:sleep\(\s*(\d+)\s*\)\s*\|\|\s*true|function\s*\(\s*\)\s*\{\s*sleep\(\s*(\d+)\s*\)\s*;\s*return\s+true\s*;?\s*})\s*$""",
    )

    /** The milliseconds a `find` or `update` [command] asks the server to sleep through its `$where` clauses, or null. */
    fun millis(command: BsonDocument): Long? {
        val filters = when (command.keys.firstOrNull()) {
            "find" -> listOfNotNull(command["filter"] as? BsonDocument)
            "update" -> (command["updates"] as? BsonArray)?.mapNotNull { (it as? BsonDocument)?.get("q") as? BsonDocument } ?: emptyList()
            else -> return null
        }
        val total = filters.sumOf { f ->
            val where = f["\$where"]?.takeIf { it.isString }?.asString()?.value
            where?.let { pattern.find(it) }?.groupValues?.drop(1)?.firstOrNull { g -> g.isNotEmpty() }?.toLong() ?: 0L
        }
        return total.takeIf { it > 0 }
    }

    /** True when [where] is a supported sleeping clause (it matches every document). */
    fun isSupported(where: String): Boolean = pattern.matches(where)
}
