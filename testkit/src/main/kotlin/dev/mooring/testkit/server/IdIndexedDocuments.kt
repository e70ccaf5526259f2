package dev.mooring.testkit.server

import org.bson.BsonDocument
import org.bson.BsonDouble
import org.bson.BsonType
import org.bson.BsonValue

/**
 * One collection's documents in insertion order, with an index on `_id` kept by the three
 * primitive mutations ([add] at an index, [set], [removeAt]) that every other mutation of a
 * [AbstractMutableList] goes through (iterators, `removeIf`, `addAll`, `clear`). As on mongod,
 * a duplicate check and an equality lookup by `_id` cost no scan: without the index, every
 * insert and every `{_id: v}` find scanned the collection under the server's lock, so a
 * collection growing by thousands of documents a second slowed every command (and the replica
 * set's hello round trips) of the test kit's servers.
 *
 * Numbers are indexed by value (`1`, `NumberLong(1)` and `1.0` are the same `_id`, as in a
 * query). Not thread-safe: guarded by [InMemoryCollections]' lock, like the list it replaces.
 */
internal class IdIndexedDocuments(initial: Collection<BsonDocument> = emptyList()) : AbstractMutableList<BsonDocument>(), RandomAccess {
    private val docs = ArrayList<BsonDocument>(initial.size)
    private val byId = HashMap<BsonValue, MutableList<BsonDocument>>()

    init {
        initial.forEach { add(it) }
    }

    override val size: Int get() = docs.size

    override fun get(index: Int): BsonDocument = docs[index]

    override fun add(index: Int, element: BsonDocument) {
        docs.add(index, element)
        index(element)
    }

    override fun set(index: Int, element: BsonDocument): BsonDocument {
        val old = docs.set(index, element)
        unindex(old)
        index(element)
        return old
    }

    override fun removeAt(index: Int): BsonDocument = docs.removeAt(index).also { unindex(it) }

    /** True when a document with this `_id` is stored (by value for numbers). */
    fun containsId(id: BsonValue): Boolean = byId.containsKey(key(id))

    /**
     * The documents whose `_id` equals [id], in insertion order, or null when [id] is not a value
     * the index answers exactly (documents, arrays, regular expressions, decimals: scan instead).
     */
    fun withId(id: BsonValue): List<BsonDocument>? {
        if (!indexable(id)) return null
        val hits = byId[key(id)] ?: return emptyList()
        return if (hits.size <= 1) hits.toList() else docs.filter { d -> hits.any { it === d } }
    }

    private fun index(d: BsonDocument) {
        d["_id"]?.let { byId.getOrPut(key(it)) { ArrayList(1) }.add(d) }
    }

    private fun unindex(d: BsonDocument) {
        val id = d["_id"] ?: return
        val k = key(id)
        val hits = byId[k] ?: return
        hits.removeIf { it === d }
        if (hits.isEmpty()) byId.remove(k)
    }

    private companion object {
        fun indexable(v: BsonValue): Boolean = when (v.bsonType) {
            BsonType.DOCUMENT, BsonType.ARRAY, BsonType.REGULAR_EXPRESSION, BsonType.DECIMAL128 -> false
            else -> true
        }

        /** Numbers by value, everything else as itself. */
        fun key(v: BsonValue): BsonValue = if (v.isNumber) BsonDouble(v.asNumber().doubleValue()) else v
    }
}
