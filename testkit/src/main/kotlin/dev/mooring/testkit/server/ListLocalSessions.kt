package dev.mooring.testkit.server

import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonInt64
import org.bson.BsonString

/**
 * The `$listLocalSessions` aggregation (`{aggregate: 1, pipeline: [{$listLocalSessions: {...}}, ...]}`):
 * sessions are the test kit's, not its data engine's, and the test kit caches no server-side
 * session records, so the listing is empty (whatever stages follow). Pure.
 */
internal object ListLocalSessions {
    private const val STAGE = "\$listLocalSessions"

    /** True when [cmd] is an aggregation starting with `$listLocalSessions`. */
    fun matches(cmd: BsonDocument): Boolean =
        cmd.firstKey == "aggregate" && ((cmd["pipeline"] as? BsonArray)?.firstOrNull() as? BsonDocument)?.containsKey(STAGE) == true

    /** The (empty) reply to such an aggregation on [db]. */
    fun reply(db: String): BsonDocument {
        val cursor = BsonDocument("firstBatch", BsonArray()).append("id", BsonInt64(0)).append("ns", BsonString("$db.\$cmd.aggregate"))
        return BsonDocument("cursor", cursor).append("ok", BsonInt32(1))
    }
}
