package dev.mooring.driver.internal

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import org.bson.BsonInt32
import org.bson.BsonString
import org.bson.BsonValue

class IndexedIdsSpec : FunSpec({
    test("reads as the map of index to _id, in model order, equal to a LinkedHashMap of the same entries") {
        val ids = IndexedIds()
        val expected = LinkedHashMap<Int, BsonValue>()
        for (i in 0 until 1_000 step 3) {
            ids.add(i, BsonInt32(i * 10))
            expected[i] = BsonInt32(i * 10)
        }
        val map = ids.snapshot()
        map.size shouldBe expected.size
        map shouldBe expected
        expected shouldBe map
        map.hashCode() shouldBe expected.hashCode()
        map.keys.toList() shouldBe expected.keys.toList()
        map[300] shouldBe BsonInt32(3_000)
        map[301] shouldBe null
        map.containsKey(999) shouldBe true
        map.containsKey(1_000) shouldBe false
        map.getValue(0) shouldBe BsonInt32(0)
    }

    test("a snapshot does not change when more ids are added") {
        val ids = IndexedIds()
        ids.add(0, BsonString("a"))
        val first = ids.snapshot()
        ids.add(5, BsonString("b"))
        first shouldBe mapOf(0 to BsonString("a"))
        ids.snapshot() shouldBe mapOf(0 to BsonString("a"), 5 to BsonString("b"))
        IndexedIds().snapshot() shouldBe emptyMap()
    }

    test("an index not above the last one added is refused") {
        val ids = IndexedIds()
        ids.add(4, BsonInt32(1))
        shouldThrow<IllegalStateException> { ids.add(4, BsonInt32(2)) }
        shouldThrow<IllegalStateException> { ids.add(2, BsonInt32(2)) }
    }
})
