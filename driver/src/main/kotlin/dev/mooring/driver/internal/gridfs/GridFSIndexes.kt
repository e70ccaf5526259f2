package dev.mooring.driver.internal.gridfs

import dev.mooring.driver.FindOptions
import dev.mooring.driver.IndexOptions
import dev.mooring.driver.MongoCollection
import dev.mooring.driver.internal.MultiCommandDeadline
import dev.mooring.sdam.ClientSession
import dev.mooring.sdam.ReadPreference
import java.util.concurrent.atomic.AtomicBoolean
import kotlinx.coroutines.flow.firstOrNull
import kotlinx.coroutines.flow.toList
import org.bson.BsonDocument
import org.bson.BsonInt32

/**
 * gridfs-spec.md "Indexes", "Before write operations": before a bucket's first write, when its
 * files collection is empty (a `find` of one `_id` on the primary), the files index
 * `{filename: 1, uploadDate: 1}` and the unique chunks index `{files_id: 1, n: 1}` are created
 * unless `listIndexes` shows them (key patterns compared by numeric value: `1`, `1L` and `1.0`
 * are one). A failure is thrown and the check runs again before the next write. Thread-safe:
 * concurrent first writes may both check (creating an existing index is no error).
 */
internal class GridFSIndexes(private val collections: GridFSCollections) {
    private val checked = AtomicBoolean(false)

    suspend fun ensure(deadline: MultiCommandDeadline, session: ClientSession?) {
        if (checked.get()) return
        val files = collections.files(deadline).withReadPreference(ReadPreference.PRIMARY)
        val empty = files.find(BsonDocument(), FindOptions(projection = BsonDocument("_id", BsonInt32(1)), limit = 1), session).firstOrNull() == null
        if (empty) {
            ensureIndex(collections.files(deadline), FILES_KEYS, unique = false, session)
            ensureIndex(collections.chunks(deadline), CHUNKS_KEYS, unique = true, session)
        }
        checked.set(true)
    }

    /** The next write checks again (after the bucket's collections were dropped). */
    fun reset() = checked.set(false)

    private suspend fun ensureIndex(c: MongoCollection<BsonDocument>, keys: BsonDocument, unique: Boolean, session: ClientSession?) {
        val existing = c.listIndexes(session = session).toList()
        if (existing.any { sameKeys(it["key"] as? BsonDocument, keys) }) return
        c.createIndex(keys, IndexOptions(unique = unique.takeIf { it }), session = session)
    }

    companion object {
        val FILES_KEYS: BsonDocument = BsonDocument("filename", BsonInt32(1)).append("uploadDate", BsonInt32(1))
        val CHUNKS_KEYS: BsonDocument = BsonDocument("files_id", BsonInt32(1)).append("n", BsonInt32(1))

        /** The same fields in the same order with numerically equal directions (gridfs-spec.md: 1, 1L and 1.0 are one). */
        fun sameKeys(actual: BsonDocument?, expected: BsonDocument): Boolean {
            if (actual == null || actual.keys.toList() != expected.keys.toList()) return false
            return expected.all { (k, v) ->
                val a = actual[k]
                a != null && a.isNumber && a.asNumber().doubleValue() == v.asNumber().doubleValue()
            }
        }
    }
}
