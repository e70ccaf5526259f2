package dev.mooring.driver

import dev.mooring.sdam.ClientSession
import dev.mooring.sdam.ReadPreference
import dev.mooring.sdam.WriteConcern
import kotlin.reflect.KClass
import kotlinx.coroutines.flow.Flow
import org.bson.BsonDocument
import org.bson.BsonValue
import org.bson.codecs.Codec
import org.bson.conversions.Bson

/**
 * One collection, with documents of type [T] (crud.md `Collection`), from
 * [MongoDatabase.collection]. Every operation runs through the cluster's operation path
 * ([dev.mooring.sdam.MongoCluster]): server selection, implicit (or the given explicit) session,
 * retryable reads and writes, timeoutMS, command monitoring, logging and tracing.
 *
 * Documents are encoded with [codec] straight into BSON bytes, and replies' documents decoded with
 * it ([DocumentDecodingException] names the namespace and field when that fails). A document
 * that is already a [org.bson.RawBsonDocument] is sent as it is (the Java facade encodes on the
 * caller's thread this way). Filters,
 * projections, sorts and update documents are [Bson] values (a [BsonDocument], or any `Bson`
 * the default codec registry can render).
 *
 * Reads ([find], [aggregate], [countDocuments], [distinct], [estimatedDocumentCount]) use
 * [readPreference] and send [readConcern] unless it is the server default. Writes go to the
 * primary with [writeConcern] (the `writeConcern` field is sent when it differs from the server
 * default; `wtimeout` is left out under a timeoutMS); with `w: 0` they report `Unacknowledged`.
 * Single-document writes and findOneAndX are retryable writes; updateMany, deleteMany and bulk
 * batches that contain one are sent once. A document larger than the server's
 * `maxBsonObjectSize` fails with [IllegalArgumentException] before anything is sent.
 *
 * **Concurrency.** Immutable: every member is thread-safe, the `with…` copies never change the
 * original, and any number of operations may run concurrently. The flows are cold: nothing is
 * sent until they are collected, and each collection runs the command anew.
 */
public interface MongoCollection<T : Any> {
    /** The database name. */
    public val databaseName: String

    /** The collection name. */
    public val collectionName: String

    /** `database.collection`. */
    public val namespace: String get() = "$databaseName.$collectionName"

    /** The class of the documents. */
    public val documentClass: KClass<T>

    /** The codec encoding and decoding [T]. */
    public val codec: Codec<T>

    /** The read preference of reads. */
    public val readPreference: ReadPreference

    /** The read concern of reads. */
    public val readConcern: ReadConcern

    /** The write concern of writes. */
    public val writeConcern: WriteConcern

    /** The operations' timeoutMS; null inherits the cluster's. */
    public val timeoutMS: Long?

    /** A copy with documents of [documentClass] (a serializer from the database's module; [IllegalArgumentException] when none). */
    public fun <R : Any> withDocumentClass(documentClass: KClass<R>): MongoCollection<R>

    /**
     * A copy whose documents are of [codec]'s encoder class, encoded and decoded with [codec] (an
     * `org.bson` codec, thread-safe; [MongoDatabase.collection] with a codec).
     */
    public fun <R : Any> withCodec(codec: Codec<R>): MongoCollection<R>

    /** A copy with [readPreference]. */
    public fun withReadPreference(readPreference: ReadPreference): MongoCollection<T>

    /** A copy with [readConcern]. */
    public fun withReadConcern(readConcern: ReadConcern): MongoCollection<T>

    /** A copy with [writeConcern]. */
    public fun withWriteConcern(writeConcern: WriteConcern): MongoCollection<T>

    /** A copy with [timeoutMS] (0: no limit; null: the cluster's; negative: [IllegalArgumentException]). */
    public fun withTimeout(timeoutMS: Long?): MongoCollection<T>

    // ---- reads

    /**
     * The documents matching [filter] (a `find` command, a retryable read), as a cold flow: the
     * command is sent when the flow is collected, getMores as the collector asks for more, and a
     * collector that stops early (or is cancelled) kills the cursor still open on the server.
     */
    public fun find(filter: Bson = BsonDocument(), options: FindOptions = FindOptions(), session: ClientSession? = null): Flow<T>

    /**
     * The results of [pipeline] (an `aggregate` command), as a cold flow like [find]. A pipeline
     * ending in `$out` or `$merge` writes a collection and returns nothing: it is sent with the
     * write concern, not retried as a read, and runs on the primary unless every available server
     * is 5.0+ (crud.md "Aggregation Pipelines with Write Stages").
     */
    public fun aggregate(pipeline: List<Bson>, options: AggregateOptions = AggregateOptions(), session: ClientSession? = null): Flow<T>

    /**
     * The changes to this collection (change-streams.md `Collection.watch`: an `aggregate` with a
     * `$changeStream` stage followed by [pipeline]) as a resumable cold flow of events whose full
     * documents are [T] (see [ChangeStream]); with this collection's read preference, read concern
     * (`majority` or none) and timeoutMS. Prefer it to [aggregate] with `$changeStream`: only this resumes.
     */
    public fun watch(pipeline: List<Bson> = emptyList(), options: ChangeStreamOptions = ChangeStreamOptions(), session: ClientSession? = null): ChangeStream<T>

    /**
     * The number of documents matching [filter], counted by an aggregate
     * (`$match`, `$skip`, `$limit`, `$group`; crud.md `countDocuments`). `$where`, `$near` and
     * `$nearSphere` cannot be used in [filter] (the `$match` stage's restrictions).
     */
    public suspend fun countDocuments(filter: Bson = BsonDocument(), options: CountOptions = CountOptions(), session: ClientSession? = null): Long

    /** The collection's document count from its metadata (the `count` command without a query; crud.md). */
    public suspend fun estimatedDocumentCount(options: EstimatedDocumentCountOptions = EstimatedDocumentCountOptions(), session: ClientSession? = null): Long

    /** The distinct values of [fieldName] among the documents matching [filter] (`distinct`). */
    public suspend fun distinct(fieldName: String, filter: Bson = BsonDocument(), options: DistinctOptions = DistinctOptions(), session: ClientSession? = null): List<BsonValue>

    // ---- writes

    /** Inserts [document]; an `_id` (ObjectId) is generated, as its first field, when it has none. Throws [MongoWriteException]. */
    public suspend fun insertOne(document: T, options: InsertOneOptions = InsertOneOptions(), session: ClientSession? = null): InsertOneResult

    /**
     * Inserts [documents] (at least one) in as few `insert` commands as the server's limits allow;
     * `_id`s are generated as for [insertOne]. Throws [MongoBulkWriteException] (indexes into
     * [documents]).
     */
    public suspend fun insertMany(documents: List<T>, options: InsertManyOptions = InsertManyOptions(), session: ClientSession? = null): InsertManyResult

    /** Updates the first document matching [filter] (a retryable write). Throws [MongoWriteException]. */
    public suspend fun updateOne(filter: Bson, update: Update, options: UpdateOptions = UpdateOptions(), session: ClientSession? = null): UpdateResult

    /** Updates every document matching [filter] (not retryable). Throws [MongoWriteException]. */
    public suspend fun updateMany(filter: Bson, update: Update, options: UpdateOptions = UpdateOptions(), session: ClientSession? = null): UpdateResult

    /**
     * Replaces the first document matching [filter] with [replacement] (a retryable write), which
     * must not contain update operators (a first key starting with `$`: [IllegalArgumentException]).
     */
    public suspend fun replaceOne(filter: Bson, replacement: T, options: ReplaceOptions = ReplaceOptions(), session: ClientSession? = null): UpdateResult

    /** Deletes the first document matching [filter] (a retryable write). Throws [MongoWriteException]. */
    public suspend fun deleteOne(filter: Bson, options: DeleteOptions = DeleteOptions(), session: ClientSession? = null): DeleteResult

    /** Deletes every document matching [filter] (not retryable). Throws [MongoWriteException]. */
    public suspend fun deleteMany(filter: Bson, options: DeleteOptions = DeleteOptions(), session: ClientSession? = null): DeleteResult

    /** Updates one document (`findAndModify`, a retryable write) and returns it before or after the change, or null when none matched. */
    public suspend fun findOneAndUpdate(filter: Bson, update: Update, options: FindOneAndUpdateOptions = FindOneAndUpdateOptions(), session: ClientSession? = null): T?

    /** Replaces one document (`findAndModify`, a retryable write) and returns it before or after, or null when none matched. */
    public suspend fun findOneAndReplace(filter: Bson, replacement: T, options: FindOneAndReplaceOptions = FindOneAndReplaceOptions(), session: ClientSession? = null): T?

    /** Deletes one document (`findAndModify`, a retryable write) and returns it, or null when none matched. */
    public suspend fun findOneAndDelete(filter: Bson, options: FindOneAndDeleteOptions = FindOneAndDeleteOptions(), session: ClientSession? = null): T?

    /**
     * Runs [models] (at least one) as `insert`, `update` and `delete` commands: consecutive models
     * of one kind share a command (in input order, ordered or not), each command split at the server's `maxWriteBatchSize` and `maxMessageSizeBytes`. Each batch is
     * its own retryable write unless it holds an updateMany or deleteMany. An ordered bulk write
     * stops at the first write error. Throws [MongoBulkWriteException] with the models' indexes.
     */
    public suspend fun bulkWrite(models: List<WriteModel<T>>, options: BulkWriteOptions = BulkWriteOptions(), session: ClientSession? = null): BulkWriteResult

    /** Drops the collection (`drop`; a missing collection is not an error). */
    public suspend fun drop(session: ClientSession? = null)

    // ---- indexes and collection management (index-management.md); writes use [writeConcern], a
    // writeConcernError is thrown as [MongoWriteConcernException] (result null); server errors as
    // the cluster's `MongoCommandException`. None is a retryable write.

    /**
     * Creates the index [keys] with [indexOptions] (a `createIndexes` command of one
     * [IndexModel]: [createIndexes]) and returns its name.
     */
    public suspend fun createIndex(
        keys: Bson,
        indexOptions: IndexOptions = IndexOptions(),
        options: CreateIndexOptions = CreateIndexOptions(),
        session: ClientSession? = null,
    ): String

    /**
     * Creates [models] (at least one) in one `createIndexes` command, on the primary, and returns
     * their names (given or generated, [IndexModel]) in order. Indexes that exist already with the
     * same specification are not an error. A [CreateIndexOptions.commitQuorum] against a primary
     * older than 4.4 fails with [IllegalArgumentException] before anything is sent.
     */
    public suspend fun createIndexes(models: List<IndexModel>, options: CreateIndexOptions = CreateIndexOptions(), session: ClientSession? = null): List<String>

    /**
     * The collection's index specifications (`listIndexes`, a retryable read on the primary) as a
     * cold flow like [find]'s; empty when the collection does not exist. From MongoDB 4.4 on they
     * have no `ns` field.
     */
    public fun listIndexes(options: ListIndexesOptions = ListIndexesOptions(), session: ClientSession? = null): Flow<BsonDocument>

    /** The names of the collection's indexes ([listIndexes]); empty when the collection does not exist. */
    public suspend fun listIndexNames(session: ClientSession? = null): List<String>

    /**
     * Drops the index [name] (`dropIndexes`). `*` (all indexes) is refused with
     * [IllegalArgumentException]: use [dropIndexes]. A missing index fails (IndexNotFound, 27); a
     * missing collection is not an error.
     */
    public suspend fun dropIndex(name: String, options: DropIndexOptions = DropIndexOptions(), session: ClientSession? = null)

    /** Drops the index with the key pattern [keys] (`dropIndexes`); as [dropIndex] by name otherwise. */
    public suspend fun dropIndex(keys: Bson, options: DropIndexOptions = DropIndexOptions(), session: ClientSession? = null)

    /** Drops every index but `_id_` (`dropIndexes` with `index: "*"`); a missing collection is not an error. */
    public suspend fun dropIndexes(options: DropIndexOptions = DropIndexOptions(), session: ClientSession? = null)

    /**
     * Creates the Atlas search index [model] (`createSearchIndexes`; no read or write concern is
     * sent) and returns its name. The build goes on after the call returns: poll
     * [listSearchIndexes] to see it ready.
     */
    public suspend fun createSearchIndex(model: SearchIndexModel, session: ClientSession? = null): String

    /**
     * Creates [models] in one `createSearchIndexes` command and returns their names, as
     * [createSearchIndex]. An empty [models] is sent as it is (`indexes: []`): the server answers it.
     */
    public suspend fun createSearchIndexes(models: List<SearchIndexModel>, session: ClientSession? = null): List<String>

    /** Replaces the definition of the search index [name] (`updateSearchIndex`; no read or write concern is sent). */
    public suspend fun updateSearchIndex(name: String, definition: Bson, session: ClientSession? = null)

    /** Drops the search index [name] (`dropSearchIndex`; no write concern); a missing collection is not an error. */
    public suspend fun dropSearchIndex(name: String, session: ClientSession? = null)

    /**
     * The collection's search indexes, or the one named [name] (an aggregate of
     * `{$listSearchIndexes: {name}}` with [options], without read concern), as a cold flow like [aggregate]'s.
     */
    public fun listSearchIndexes(name: String? = null, options: AggregateOptions = AggregateOptions(), session: ClientSession? = null): Flow<BsonDocument>

    /**
     * Renames the collection to [newCollectionName] in [newDatabaseName] (null: this database)
     * with `renameCollection` on `admin`, dropping an existing target first when [dropTarget]
     * (else the server fails with NamespaceExists, 48). Returns the renamed collection, with this
     * one's settings.
     */
    public suspend fun renameCollection(
        newCollectionName: String,
        dropTarget: Boolean = false,
        newDatabaseName: String? = null,
        session: ClientSession? = null,
    ): MongoCollection<T>
}
