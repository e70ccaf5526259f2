package dev.mooring.testkit.server.changes

import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import org.bson.BsonDocument

/** The test kit's change events: update descriptions by diff, resume tokens, startAtOperationTime positions. */
class ChangeEventsSpec : FunSpec({
    test("an update's description: dotted paths, removed fields, truncated arrays, ambiguous paths disambiguated") {
        val before = BsonDocument.parse("{_id: 1, a: {'1': 1}, b: [1, 2, 3], c: 1, d: [{'1': 1}]}")
        val after = BsonDocument.parse("{_id: 1, a: {'1': 2}, b: [1, 5], d: [{'1': 2}], e: 'new'}")
        UpdateDiff.of(before, after) shouldBe BsonDocument.parse(
            """{updatedFields: {'a.1': 2, 'b.1': 5, 'd.0.1': 2, e: 'new'}, removedFields: ['c'],
               truncatedArrays: [{field: 'b', newSize: 2}], disambiguatedPaths: {'a.1': ['a', '1'], 'b.1': ['b', 1], 'd.0.1': ['d', 0, '1']}}""",
        )
    }

    test("resume tokens name a position (and an invalidate); startAtOperationTime starts at the first event at or after it") {
        val log = ChangeEventLog()
        val first = log.append("db", "c", "insert")
        val second = log.append("db", "c", "insert")
        ChangeEventLog.positionOf(ChangeEventLog.token(second.position)) shouldBe (2L to false)
        ChangeEventLog.positionOf(ChangeEventLog.token(second.position, invalidate = true)) shouldBe (2L to true)
        ChangeEventLog.positionOf(BsonDocument.parse("{_data: 'zz'}")) shouldBe null
        log.positionBefore(second.clusterTime) shouldBe 1L
        log.positionBefore(first.clusterTime) shouldBe 0L
        log.after(1).map { it.position } shouldBe listOf(2L)
    }
})
