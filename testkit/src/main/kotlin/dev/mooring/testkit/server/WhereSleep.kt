package dev.mooring.testkit.server

import org.bson.BsonArray
import org.bson.BsonDocument

/**
 * The one JavaScript `$where` filter the spec tests use to make a find or update take a while:
 * `{$where: "sleep(N) || true"}`, or `"function() { sleep(N); return true; }"`. The server sleeps N milliseconds once (as mongod does on a
 * one-document collection: it evaluates the function per document) and the clause matches
 * every document: [withoutSleep] takes the clause out before the data engine sees the command (any
 * other `$where` is left to the engine). Pure.
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

    /** [command] (a find, update or delete) without its supported sleeping `$where` clauses (see [millis]). */
    fun withoutSleep(command: BsonDocument): BsonDocument {
        val (array, key) = when (command.keys.firstOrNull()) {
            "find" -> return withoutSleepIn(command, "filter")
            "update" -> "updates" to "q"
            "delete" -> "deletes" to "q"
            else -> return command
        }
        val statements = command[array] as? BsonArray ?: return command
        if (statements.none { s -> (s as? BsonDocument)?.let { withoutSleepIn(it, key) !== it } == true }) return command
        return command.clone().append(array, BsonArray(statements.map { s -> if (s is BsonDocument) withoutSleepIn(s, key) else s }))
    }

    /** [holder] with the sleeping `$where` of its filter [key] removed (the same instance when there is none). */
    private fun withoutSleepIn(holder: BsonDocument, key: String): BsonDocument {
        val filter = holder[key] as? BsonDocument ?: return holder
        val where = filter["\$where"]?.takeIf { it.isString }?.asString()?.value ?: return holder
        if (!isSupported(where)) return holder
        return holder.clone().append(key, filter.clone().apply { remove("\$where") })
    }
}
