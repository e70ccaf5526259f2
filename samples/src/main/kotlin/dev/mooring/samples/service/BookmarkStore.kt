@file:OptIn(ExperimentalTime::class, ExperimentalUuidApi::class)

package dev.mooring.samples.service

import dev.mooring.driver.DeleteResult
import dev.mooring.driver.FindOptions
import dev.mooring.driver.IndexOptions
import dev.mooring.driver.MongoCollection
import dev.mooring.driver.MongoDatabase
import dev.mooring.driver.Update
import dev.mooring.driver.UpdateResult
import dev.mooring.driver.collection
import kotlinx.coroutines.flow.firstOrNull
import kotlinx.coroutines.flow.toList
import org.bson.BsonArray
import org.bson.BsonBinary
import org.bson.BsonDateTime
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString
import kotlin.time.Clock
import kotlin.time.ExperimentalTime
import kotlin.time.Instant
import kotlin.uuid.ExperimentalUuidApi
import kotlin.uuid.Uuid
import kotlin.uuid.toJavaUuid

/**
 * The bookmarks of [database], in its `bookmarks` collection, through a typed
 * `MongoCollection<Bookmark>`. Driver errors pass through unchanged (a duplicate [Bookmark.url] is
 * a `MongoWriteException` with code 11000); "not found" is a null or false result.
 *
 * **Concurrency.** Stateless apart from the immutable collection: every method may be called
 * concurrently. [clock] stamps [Bookmark.createdAt] and [Bookmark.updatedAt] (in milliseconds, as BSON dates hold them).
 */
class BookmarkStore(private val database: MongoDatabase, private val clock: Clock = Clock.System) {
    private val bookmarks: MongoCollection<Bookmark> = database.collection<Bookmark>(COLLECTION)

    /** Creates the unique index on `url` (`createIndexes`; nothing happens when it exists). Call once at start-up. */
    suspend fun ensureIndexes() {
        bookmarks.createIndex(BsonDocument("url", BsonInt32(1)), IndexOptions(name = "url_unique", unique = true))
    }

    /** Inserts a bookmark with a new random id; a taken url fails with `MongoWriteException` (11000). */
    suspend fun create(new: NewBookmark): Bookmark {
        // cut to BSON's millisecond precision first, so the bookmark returned is the one a read returns
        val bookmark = Bookmark(Uuid.random(), new.url, new.title, new.tags, Instant.fromEpochMilliseconds(clock.now().toEpochMilliseconds()))
        bookmarks.insertOne(bookmark)
        return bookmark
    }

    /** The bookmark [id], or null. */
    suspend fun get(id: Uuid): Bookmark? = bookmarks.find(byId(id), FindOptions(limit = 1)).firstOrNull()

    /** The bookmarks tagged [tag] (every one when null), newest first, at most [limit], and how many match. */
    suspend fun list(tag: String?, limit: Int): BookmarkPage {
        val filter = if (tag == null) BsonDocument() else BsonDocument("tags", BsonString(tag))
        val page = bookmarks.find(filter, FindOptions(sort = BsonDocument("createdAt", BsonInt32(-1)), limit = limit)).toList()
        return BookmarkPage(bookmarks.countDocuments(filter), page)
    }

    /** Applies [changes] (`updateOne` with `$set`) and returns the bookmark after them, or null when there is no bookmark [id]. */
    suspend fun update(id: Uuid, changes: BookmarkChanges): Bookmark? {
        val set = BsonDocument("updatedAt", BsonDateTime(clock.now().toEpochMilliseconds()))
        changes.url?.let { set.append("url", BsonString(it)) }
        changes.title?.let { set.append("title", BsonString(it)) }
        changes.tags?.let { tags -> set.append("tags", BsonArray(tags.map(::BsonString))) }
        val result = bookmarks.updateOne(byId(id), Update.Operators(BsonDocument("\$set", set)))
        if (result is UpdateResult.Acknowledged && result.matchedCount == 0L) return null
        return get(id)
    }

    /** Deletes the bookmark [id]; false when there was none (an unacknowledged delete counts as done). */
    suspend fun delete(id: Uuid): Boolean {
        val result = bookmarks.deleteOne(byId(id))
        return result !is DeleteResult.Acknowledged || result.deletedCount > 0
    }

    private fun byId(id: Uuid) = BsonDocument("_id", BsonBinary(id.toJavaUuid()))

    private companion object {
        const val COLLECTION = "bookmarks"
    }
}
