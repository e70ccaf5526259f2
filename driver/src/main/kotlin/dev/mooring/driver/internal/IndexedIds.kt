package dev.mooring.driver.internal

import org.bson.BsonValue
import java.util.AbstractMap.SimpleImmutableEntry

/**
 * The `_id`s of a bulk write's inserts by the index of their write model (crud.md
 * `insertedIds`), collected in model order: two arrays instead of a map entry and a boxed key per
 * document (a 10,000-document insertMany allocated about 300 bytes per document for its map and
 * the copy of it in the result). Not thread-safe while collecting; [snapshot] is immutable.
 */
internal class IndexedIds {
    private var indexes = IntArray(16)
    private var ids = arrayOfNulls<BsonValue>(16)
    private var count = 0

    /** Adds [id] for the model at [index], which must be above every index added before (statements run in model order). */
    fun add(index: Int, id: BsonValue) {
        check(count == 0 || index > indexes[count - 1]) { "inserted ids must be added in model order: $index after ${indexes[count - 1]}" }
        if (count == indexes.size) {
            indexes = indexes.copyOf(count * 2)
            ids = ids.copyOf(count * 2)
        }
        indexes[count] = index
        ids[count] = id
        count++
    }

    /** What was added so far, as an immutable map in model order. */
    fun snapshot(): Map<Int, BsonValue> = if (count == 0) emptyMap() else Snapshot(indexes.copyOf(count), ids.copyOf(count))

    /** A read-only map over sorted indexes; `equals` and `hashCode` are `Map`'s. */
    private class Snapshot(private val indexes: IntArray, private val ids: Array<BsonValue?>) : AbstractMap<Int, BsonValue>() {
        override val size: Int get() = indexes.size

        override fun get(key: Int): BsonValue? = indexes.binarySearch(key).let { if (it >= 0) ids[it] else null }

        override fun containsKey(key: Int): Boolean = indexes.binarySearch(key) >= 0

        override val entries: Set<Map.Entry<Int, BsonValue>> = object : AbstractSet<Map.Entry<Int, BsonValue>>() {
            override val size: Int get() = indexes.size

            override fun iterator(): Iterator<Map.Entry<Int, BsonValue>> = object : Iterator<Map.Entry<Int, BsonValue>> {
                private var i = 0

                override fun hasNext(): Boolean = i < indexes.size

                override fun next(): Map.Entry<Int, BsonValue> {
                    if (i >= indexes.size) throw NoSuchElementException()
                    return SimpleImmutableEntry(indexes[i], ids[i]!!).also { i++ }
                }
            }
        }
    }
}
