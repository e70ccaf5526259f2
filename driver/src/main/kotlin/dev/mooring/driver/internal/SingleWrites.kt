package dev.mooring.driver.internal

import dev.mooring.driver.BulkWriteOptions
import dev.mooring.driver.BulkWriteResult
import dev.mooring.driver.DeleteOptions
import dev.mooring.driver.DeleteResult
import dev.mooring.driver.InsertOneOptions
import dev.mooring.driver.InsertOneResult
import dev.mooring.driver.MongoBulkWriteException
import dev.mooring.driver.MongoWriteConcernException
import dev.mooring.driver.MongoWriteException
import dev.mooring.driver.ReplaceOptions
import dev.mooring.driver.SingleWriteResult
import dev.mooring.driver.UpdateOptions
import dev.mooring.driver.UpdateResult
import dev.mooring.driver.WriteModel
import dev.mooring.sdam.ClientSession

/**
 * insertOne, updateOne/Many, replaceOne, deleteOne/Many: a bulk write of one model, whose
 * [MongoBulkWriteException] becomes a [MongoWriteException] (a write error) or a
 * [MongoWriteConcernException] (only a write concern error), as crud.md's single-write errors.
 * Immutable.
 */
internal class SingleWrites<T : Any>(private val defaults: Defaults, private val collection: String, private val codec: DocumentCodec<T>) {
    private val namespace get() = "${defaults.databaseName}.$collection"

    suspend fun insertOne(document: T, o: InsertOneOptions, session: ClientSession?): InsertOneResult =
        run(WriteModel.InsertOne(document), BulkWriteOptions(true, o.bypassDocumentValidation, null, o.comment, o.rawData), session) { r ->
            val id = r.insertedIds.getValue(0)
            if (r is BulkWriteResult.Acknowledged) InsertOneResult.Acknowledged(id) else InsertOneResult.Unacknowledged(id)
        }

    suspend fun update(model: WriteModel<T>, o: UpdateOptions, session: ClientSession?): UpdateResult =
        run(model, BulkWriteOptions(true, o.bypassDocumentValidation, o.let, o.comment, o.rawData), session, ::updateResult)

    suspend fun replace(model: WriteModel<T>, o: ReplaceOptions, session: ClientSession?): UpdateResult =
        run(model, BulkWriteOptions(true, o.bypassDocumentValidation, o.let, o.comment, o.rawData), session, ::updateResult)

    suspend fun delete(model: WriteModel<T>, o: DeleteOptions, session: ClientSession?): DeleteResult =
        run(model, BulkWriteOptions(true, null, o.let, o.comment, o.rawData), session) { r ->
            if (r is BulkWriteResult.Acknowledged) DeleteResult.Acknowledged(r.deletedCount) else DeleteResult.Unacknowledged
        }

    private fun updateResult(r: BulkWriteResult): UpdateResult = when (r) {
        is BulkWriteResult.Acknowledged -> UpdateResult.Acknowledged(r.matchedCount, r.modifiedCount, r.upsertedIds[0])
        is BulkWriteResult.Unacknowledged -> UpdateResult.Unacknowledged
    }

    private suspend fun <R : SingleWriteResult> run(model: WriteModel<T>, options: BulkWriteOptions, session: ClientSession?, result: (BulkWriteResult) -> R): R {
        val r = try {
            BulkWriteExecutor(defaults, collection, codec, reportsInterruption = false).execute(listOf(model), options, session)
        } catch (e: MongoBulkWriteException) {
            val wce = e.writeConcernErrors.firstOrNull()
            val error = e.writeErrors.firstOrNull()
            val single = if (error != null) MongoWriteException(error, wce, namespace) else MongoWriteConcernException(wce!!, result(e.partialResult), namespace)
            e.errorLabels.forEach { single.addErrorLabel(it) }
            throw single
        }
        return result(r)
    }
}
