package dev.mooring.spec.unified

import dev.mooring.driver.BulkWriteResult
import dev.mooring.driver.DeleteResult
import dev.mooring.driver.InsertManyResult
import dev.mooring.driver.InsertOneResult
import dev.mooring.driver.MongoBulkWriteException
import dev.mooring.driver.MongoWriteConcernException
import dev.mooring.driver.MongoWriteException
import dev.mooring.driver.SingleWriteResult
import dev.mooring.driver.UpdateResult
import dev.mooring.driver.interruptedBulkWrite
import org.bson.BsonBoolean
import org.bson.BsonDocument
import org.bson.BsonInt64
import org.bson.BsonValue

/**
 * The driver's results and exceptions in the unified format's terms: results as crud.md's
 * result documents (`insertedId`, `insertedIds`, `matchedCount`, `modifiedCount`,
 * `upsertedCount`, `upsertedId`, `deletedCount`, `insertedCount`, `upsertedIds`; an
 * unacknowledged write as `{acknowledged: false}`), and the error facts `expectError` asserts
 * (code, code name, partial result) of [MongoWriteException], [MongoWriteConcernException],
 * [MongoBulkWriteException] and of an error that interrupted a bulk write. Pure.
 */
object DriverResults {
    private val UNACKNOWLEDGED get() = BsonDocument("acknowledged", BsonBoolean.FALSE)

    private fun ids(m: Map<Int, BsonValue>) = BsonDocument().also { d -> m.toSortedMap().forEach { (i, id) -> d["$i"] = id } }

    fun insertOne(r: InsertOneResult): BsonDocument = when (r) {
        is InsertOneResult.Acknowledged -> BsonDocument("insertedId", r.insertedId)
        is InsertOneResult.Unacknowledged -> UNACKNOWLEDGED.append("insertedId", r.insertedId)
    }

    fun insertMany(r: InsertManyResult): BsonDocument = when (r) {
        is InsertManyResult.Acknowledged -> BsonDocument("insertedIds", ids(r.insertedIds))
        is InsertManyResult.Unacknowledged -> UNACKNOWLEDGED.append("insertedIds", ids(r.insertedIds))
    }

    fun update(r: UpdateResult): BsonDocument = when (r) {
        is UpdateResult.Acknowledged -> BsonDocument("matchedCount", BsonInt64(r.matchedCount)).append("modifiedCount", BsonInt64(r.modifiedCount))
            .append("upsertedCount", BsonInt64(if (r.upsertedId != null) 1 else 0)).also { d -> r.upsertedId?.let { d["upsertedId"] = it } }
        UpdateResult.Unacknowledged -> UNACKNOWLEDGED
    }

    fun delete(r: DeleteResult): BsonDocument = when (r) {
        is DeleteResult.Acknowledged -> BsonDocument("deletedCount", BsonInt64(r.deletedCount))
        DeleteResult.Unacknowledged -> UNACKNOWLEDGED
    }

    fun bulkWrite(r: BulkWriteResult): BsonDocument = when (r) {
        is BulkWriteResult.Acknowledged -> BsonDocument("deletedCount", BsonInt64(r.deletedCount)).append("insertedCount", BsonInt64(r.insertedCount))
            .append("insertedIds", ids(r.insertedIds)).append("matchedCount", BsonInt64(r.matchedCount)).append("modifiedCount", BsonInt64(r.modifiedCount))
            .append("upsertedCount", BsonInt64(r.upsertedCount)).append("upsertedIds", ids(r.upsertedIds))
        is BulkWriteResult.Unacknowledged -> UNACKNOWLEDGED.append("insertedIds", ids(r.insertedIds))
    }

    fun count(n: Long): BsonValue = BsonInt64(n)

    private fun single(r: SingleWriteResult): BsonDocument = when (r) {
        is InsertOneResult -> insertOne(r)
        is UpdateResult -> update(r)
        is DeleteResult -> delete(r)
    }

    /** The server error code [error] carries: a write error's, a write concern error's (a bulk write's first write error, else its first write concern error). */
    fun errorCode(error: Throwable): Int? = when (error) {
        is MongoWriteException -> error.code
        is MongoWriteConcernException -> error.code
        is MongoBulkWriteException -> error.writeErrors.firstOrNull()?.code ?: error.writeConcernErrors.firstOrNull()?.code
        else -> null
    }

    /** The code name [error] carries (write concern errors have one; the driver's [dev.mooring.driver.WriteError] has none), or null. */
    fun errorCodeName(error: Throwable): String? = when (error) {
                is MongoWriteConcernException -> error.writeConcernError.codeName
        is MongoBulkWriteException -> if (error.writeErrors.isEmpty()) error.writeConcernErrors.firstOrNull()?.codeName else null
        else -> null
    }

    /** The result a failed write still reports (`expectError.expectResult`): a bulk write's partial result, a write concern error's result. */
    fun partialResult(error: Throwable): BsonDocument? = when (error) {
        is MongoBulkWriteException -> bulkWrite(error.partialResult)
        is MongoWriteConcernException -> error.result?.let(::single)
        // a bulk write interrupted by another error: that error, with the outcome so far attached
        else -> error.interruptedBulkWrite?.let { bulkWrite(it.partialResult) }
    }
}
