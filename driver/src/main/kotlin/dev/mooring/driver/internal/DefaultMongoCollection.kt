package dev.mooring.driver.internal

import dev.mooring.sdam.internal.HelperCommand
import kotlinx.coroutines.flow.emitAll
import kotlinx.coroutines.flow.flow
import dev.mooring.driver.AggregateOptions
import dev.mooring.driver.ChangeStream
import dev.mooring.driver.ChangeStreamOptions
import dev.mooring.driver.BulkWriteOptions
import dev.mooring.driver.BulkWriteResult
import dev.mooring.driver.CountOptions
import dev.mooring.driver.CreateIndexOptions
import dev.mooring.driver.DeleteOptions
import dev.mooring.driver.DeleteResult
import dev.mooring.driver.DistinctOptions
import dev.mooring.driver.DropIndexOptions
import dev.mooring.driver.EstimatedDocumentCountOptions
import dev.mooring.driver.FindOneAndDeleteOptions
import dev.mooring.driver.FindOneAndReplaceOptions
import dev.mooring.driver.FindOneAndUpdateOptions
import dev.mooring.driver.FindOptions
import dev.mooring.driver.IndexModel
import dev.mooring.driver.IndexOptions
import dev.mooring.driver.InsertManyOptions
import dev.mooring.driver.InsertManyResult
import dev.mooring.driver.InsertOneOptions
import dev.mooring.driver.InsertOneResult
import dev.mooring.driver.ListIndexesOptions
import dev.mooring.driver.MongoCollection
import dev.mooring.driver.ReadConcern
import dev.mooring.driver.ReplaceOptions
import dev.mooring.driver.SearchIndexModel
import dev.mooring.driver.Update
import dev.mooring.driver.UpdateOptions
import dev.mooring.driver.UpdateResult
import dev.mooring.driver.WriteModel
import dev.mooring.sdam.ClientSession
import dev.mooring.sdam.ReadPreference
import dev.mooring.sdam.WriteConcern
import dev.mooring.sdam.internal.cursor.CursorPage
import kotlin.reflect.KClass
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.flow.transform
import org.bson.BsonDocument
import org.bson.BsonString
import org.bson.BsonValue
import org.bson.codecs.Codec
import org.bson.conversions.Bson

/** [MongoCollection] over [defaults] and [documents]. Immutable. */
internal class DefaultMongoCollection<T : Any>(
    private val defaults: Defaults,
    override val collectionName: String,
    private val documents: DocumentCodec<T>,
) : MongoCollection<T> {
    override val databaseName: String get() = defaults.databaseName
    override val documentClass: KClass<T> get() = documents.documentClass
    override val codec: Codec<T> get() = documents.codec
    override val readPreference: ReadPreference get() = defaults.readPreference
    override val readConcern: ReadConcern get() = defaults.readConcern
    override val writeConcern: WriteConcern get() = defaults.writeConcern
    override val timeoutMS: Long? get() = defaults.timeoutMS

    private val cluster get() = defaults.cluster
    private val writes = SingleWrites(defaults, collectionName, documents)

    override fun <R : Any> withDocumentClass(documentClass: KClass<R>): MongoCollection<R> =
        DefaultMongoCollection(defaults, collectionName, DocumentCodec.of(documentClass, defaults.module, namespace))

    override fun <R : Any> withCodec(codec: Codec<R>): MongoCollection<R> =
        DefaultMongoCollection(defaults, collectionName, DocumentCodec(codec.encoderClass.kotlin, codec, namespace))

    override fun withReadPreference(readPreference: ReadPreference): MongoCollection<T> = copy(defaults.copy(readPreference = readPreference))

    override fun withReadConcern(readConcern: ReadConcern): MongoCollection<T> = copy(defaults.copy(readConcern = readConcern))

    override fun withWriteConcern(writeConcern: WriteConcern): MongoCollection<T> = copy(defaults.copy(writeConcern = writeConcern))

    override fun withTimeout(timeoutMS: Long?): MongoCollection<T> = copy(defaults.copy(timeoutMS = timeoutMS))

    private fun copy(d: Defaults) = DefaultMongoCollection(d, collectionName, documents)

    // ---- reads

    override fun find(filter: Bson, options: FindOptions, session: ClientSession?): Flow<T> {
        val cmd = FindCommand.command(collectionName, filter, options, defaults.readConcern, defaults.legacyMaxTimeMS(options.maxTimeMS))
        val cursor = FindCommand.cursorOptions(options, defaults.readPreference, session, defaults)
        return decoded(CursorPage.pages(cluster, databaseName, cmd, cursor, retryableRead = true, limit = FindCommand.cursorLimit(options)))
    }

    override fun aggregate(pipeline: List<Bson>, options: AggregateOptions, session: ClientSession?): Flow<T> {
        val stages = pipeline.toArray()
        val writes = AggregateCommand.writes(stages)
        val cmd = AggregateCommand.command(
            collectionName, stages, options, defaults.readConcern, defaults.writeConcern, cluster.settings.writeConcern, defaults.timeoutSet,
            defaults.legacyMaxTimeMS(options.maxTimeMS),
        )
        // a pipeline that writes is not a retryable read (retryable-reads.md); its read preference is decided when collected
        if (!writes) return decoded(CursorPage.pages(cluster, databaseName, cmd, defaults.cursorOptions(defaults.readPreference, session, options.timeoutMode, options.batchSize, options.comment), retryableRead = true))
        return decoded(flow {
            val readPreference = AggregateCommand.writeStageReadPreference(cluster, defaults.readPreference)
            emitAll(CursorPage.pages(cluster, databaseName, cmd, defaults.cursorOptions(readPreference, session, options.timeoutMode, options.batchSize, options.comment), retryableRead = false))
        })
    }

    override fun watch(pipeline: List<Bson>, options: ChangeStreamOptions, session: ClientSession?): ChangeStream<T> =
        DefaultChangeStream(ChangeStreamCommand(defaults, collectionName, false, pipeline, options, session), ChangeStreamEvents(documents))

    private fun decoded(pages: Flow<CursorPage>): Flow<T> = pages.transform { page ->
        page.error?.let { throw it }
        for (d in page.documents) emit(documents.decode(d))
    }

    override suspend fun countDocuments(filter: Bson, options: CountOptions, session: ClientSession?): Long {
        val cmd = CountCommands.countDocuments(collectionName, filter, options, defaults.readConcern, defaults.legacyMaxTimeMS(options.maxTimeMS))
        val reply = cluster.runRetryableRead(databaseName, cmd, defaults.readPreference, session, defaults.timeoutMS)
        return CountCommands.countOf(reply)
    }

    override suspend fun estimatedDocumentCount(options: EstimatedDocumentCountOptions, session: ClientSession?): Long {
        val cmd = CountCommands.count(collectionName, options, defaults.readConcern, defaults.legacyMaxTimeMS(options.maxTimeMS))
        val reply = cluster.runRetryableRead(databaseName, cmd, defaults.readPreference, session, defaults.timeoutMS)
        return WriteReplies.count(reply, "n")
    }

    override suspend fun distinct(fieldName: String, filter: Bson, options: DistinctOptions, session: ClientSession?): List<BsonValue> {
        val cmd = BsonDocument("distinct", BsonString(collectionName)).append("key", BsonString(fieldName)).append("query", filter.toDoc())
        cmd.optDoc("collation", options.collation).opt("comment", options.comment).opt("hint", options.hint).opt("maxTimeMS", defaults.legacyMaxTimeMS(options.maxTimeMS)).optRawData(options.rawData)
        Concerns.applyReadConcern(cmd, defaults.readConcern)
        val reply = cluster.runRetryableRead(databaseName, cmd, defaults.readPreference, session, defaults.timeoutMS)
        return reply["values"]?.takeIf { it.isArray }?.asArray()?.values?.toList().orEmpty()
    }

    // ---- writes

    override suspend fun insertOne(document: T, options: InsertOneOptions, session: ClientSession?): InsertOneResult =
        writes.insertOne(document, options, session)

    override suspend fun insertMany(documents: List<T>, options: InsertManyOptions, session: ClientSession?): InsertManyResult {
        require(documents.isNotEmpty()) { "insertMany needs at least one document" }
        val result = bulk(documents.map { WriteModel.InsertOne(it) }, BulkWriteOptions(options.ordered, options.bypassDocumentValidation, null, options.comment, options.rawData), session)
        return when (result) {
            is BulkWriteResult.Acknowledged -> InsertManyResult.Acknowledged(result.insertedIds)
            is BulkWriteResult.Unacknowledged -> InsertManyResult.Unacknowledged(result.insertedIds)
        }
    }

    override suspend fun updateOne(filter: Bson, update: Update, options: UpdateOptions, session: ClientSession?): UpdateResult =
        writes.update(WriteModel.UpdateOne(filter, update, options.arrayFilters, options.collation, options.hint, options.upsert, options.sort), options, session)

    override suspend fun updateMany(filter: Bson, update: Update, options: UpdateOptions, session: ClientSession?): UpdateResult {
        require(options.sort == null) { "sort applies to updateOne only" }
        return writes.update(WriteModel.UpdateMany(filter, update, options.arrayFilters, options.collation, options.hint, options.upsert), options, session)
    }

    override suspend fun replaceOne(filter: Bson, replacement: T, options: ReplaceOptions, session: ClientSession?): UpdateResult =
        writes.replace(WriteModel.ReplaceOne(filter, replacement, options.collation, options.hint, options.upsert, options.sort), options, session)

    override suspend fun deleteOne(filter: Bson, options: DeleteOptions, session: ClientSession?): DeleteResult =
        writes.delete(WriteModel.DeleteOne(filter, options.collation, options.hint), options, session)

    override suspend fun deleteMany(filter: Bson, options: DeleteOptions, session: ClientSession?): DeleteResult =
        writes.delete(WriteModel.DeleteMany(filter, options.collation, options.hint), options, session)

    override suspend fun findOneAndUpdate(filter: Bson, update: Update, options: FindOneAndUpdateOptions, session: ClientSession?): T? =
        FindAndModify(defaults, collectionName, documents).update(filter, update, options, session)

    override suspend fun findOneAndReplace(filter: Bson, replacement: T, options: FindOneAndReplaceOptions, session: ClientSession?): T? =
        FindAndModify(defaults, collectionName, documents).replace(filter, replacement, options, session)

    override suspend fun findOneAndDelete(filter: Bson, options: FindOneAndDeleteOptions, session: ClientSession?): T? =
        FindAndModify(defaults, collectionName, documents).delete(filter, options, session)

    override suspend fun bulkWrite(models: List<WriteModel<T>>, options: BulkWriteOptions, session: ClientSession?): BulkWriteResult =
        bulk(models, options, session)

    private suspend fun bulk(models: List<WriteModel<T>>, options: BulkWriteOptions, session: ClientSession?): BulkWriteResult =
        BulkWriteExecutor(defaults, collectionName, documents).execute(models, options, session)

    override suspend fun drop(session: ClientSession?) {
        val cmd = BsonDocument("drop", BsonString(collectionName))
        Concerns.applyWriteConcern(cmd, defaults.writeConcern, cluster.settings.writeConcern, defaults.timeoutSet)
        try {
            HelperCommand.run(cluster, databaseName, cmd, ReadPreference.PRIMARY, session, defaults.timeoutMS, operationName = "dropCollection")
        } catch (e: dev.mooring.cmap.MongoCommandException) {
            if (!AdminCommands.isNamespaceNotFound(e)) throw e
        }
    }

    // ---- indexes and collection management

    private val indexes get() = IndexOperations(defaults, collectionName)
    private val searchIndexes get() = SearchIndexOperations(defaults, collectionName)

    override suspend fun createIndex(keys: Bson, indexOptions: IndexOptions, options: CreateIndexOptions, session: ClientSession?): String =
        indexes.createIndexes(listOf(IndexModel(keys, indexOptions)), options, session).single()

    override suspend fun createIndexes(models: List<IndexModel>, options: CreateIndexOptions, session: ClientSession?): List<String> =
        indexes.createIndexes(models, options, session)

    override fun listIndexes(options: ListIndexesOptions, session: ClientSession?): Flow<BsonDocument> = indexes.listIndexes(options, session)

    override suspend fun listIndexNames(session: ClientSession?): List<String> =
        indexes.listIndexes(ListIndexesOptions(), session).toList().map { it.getString("name").value }

    override suspend fun dropIndex(name: String, options: DropIndexOptions, session: ClientSession?) {
        require(name != "*") { "dropIndex(\"*\") would drop every index: use dropIndexes()" }
        require(name.isNotEmpty()) { "an index name must not be empty" }
        indexes.dropIndexes(BsonString(name), options, session)
    }

    override suspend fun dropIndex(keys: Bson, options: DropIndexOptions, session: ClientSession?) {
        val pattern = keys.toDoc()
        require(pattern.isNotEmpty()) { "an index key pattern must not be empty" }
        indexes.dropIndexes(pattern, options, session)
    }

    override suspend fun dropIndexes(options: DropIndexOptions, session: ClientSession?): Unit =
        indexes.dropIndexes(BsonString("*"), options, session)

    override suspend fun createSearchIndex(model: SearchIndexModel, session: ClientSession?): String =
        searchIndexes.create(listOf(model), session).single()

    override suspend fun createSearchIndexes(models: List<SearchIndexModel>, session: ClientSession?): List<String> = searchIndexes.create(models, session)

    override suspend fun updateSearchIndex(name: String, definition: Bson, session: ClientSession?): Unit =
        searchIndexes.update(name, definition.toDoc(), session)

    override suspend fun dropSearchIndex(name: String, session: ClientSession?): Unit = searchIndexes.drop(name, session)

    override fun listSearchIndexes(name: String?, options: AggregateOptions, session: ClientSession?): Flow<BsonDocument> =
        searchIndexes.list(name, options, session)

    override suspend fun renameCollection(newCollectionName: String, dropTarget: Boolean, newDatabaseName: String?, session: ClientSession?): MongoCollection<T> {
        val toDatabase = newDatabaseName ?: databaseName
        RenameCollectionCommand.run(defaults, collectionName, toDatabase, newCollectionName, dropTarget, session)
        val target = if (toDatabase == databaseName) defaults else defaults.copy(databaseName = toDatabase)
        return DefaultMongoCollection(target, newCollectionName, DocumentCodec(documentClass, documents.codec, "$toDatabase.$newCollectionName"))
    }

    override fun toString(): String = "MongoCollection($namespace, ${documentClass.simpleName})"
}
