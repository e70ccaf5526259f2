package dev.mooring.java

import dev.mooring.driver.AggregateOptions
import dev.mooring.driver.ChangeStreamOptions
import dev.mooring.driver.BulkWriteOptions
import dev.mooring.driver.BulkWriteResult
import dev.mooring.driver.CountOptions
import dev.mooring.driver.DeleteOptions
import dev.mooring.driver.DeleteResult
import dev.mooring.driver.DistinctOptions
import dev.mooring.driver.DocumentDecodingException
import dev.mooring.driver.EstimatedDocumentCountOptions
import dev.mooring.driver.FindOneAndDeleteOptions
import dev.mooring.driver.FindOneAndReplaceOptions
import dev.mooring.driver.FindOneAndUpdateOptions
import dev.mooring.driver.FindOptions
import dev.mooring.driver.InsertManyOptions
import dev.mooring.driver.InsertManyResult
import dev.mooring.driver.InsertOneOptions
import dev.mooring.driver.InsertOneResult
import dev.mooring.driver.MongoBulkWriteException
import dev.mooring.driver.MongoCollection
import dev.mooring.driver.MongoWriteException
import dev.mooring.driver.ReadConcern
import dev.mooring.driver.ReplaceOptions
import dev.mooring.driver.Update
import dev.mooring.driver.UpdateOptions
import dev.mooring.driver.UpdateResult
import dev.mooring.driver.WriteModel
import dev.mooring.sdam.ClientSession
import dev.mooring.sdam.MongoClusterClosedException
import dev.mooring.sdam.ReadPreference
import dev.mooring.sdam.WriteConcern
import org.bson.BsonValue
import org.bson.codecs.configuration.CodecRegistry
import org.bson.conversions.Bson
import java.util.concurrent.CompletableFuture
import java.util.concurrent.Flow

/**
 * The Java face of a driver [MongoCollection], from [JavaMongoDatabase.getCollection]: every CRUD
 * operation of the Kotlin collection, with the same commands, options, results and errors
 * ([MongoWriteException], `MongoWriteConcernException`, [MongoBulkWriteException],
 * [DocumentDecodingException], the cluster's errors), returning a [CompletableFuture] or, for
 * [find] and [aggregate], a [Flow.Publisher]. Documents of type [T] are encoded with the codec
 * of [codecRegistry] straight into BSON bytes and decoded from the replies with it; the documents
 * of a write are encoded when its method is called (later changes to them don't matter, and a
 * codec's error is thrown by the call itself). Overloads
 * without options use the options' defaults; a null session runs in an implicit one.
 *
 * **Concurrency.** Immutable: every method is thread-safe, the `with…` copies never change the
 * original, and any number of operations may run concurrently. Operations run as coroutines of
 * the cluster facade's scope (on `Dispatchers.Default`) and their futures complete on Mooring's
 * threads: don't block in their callbacks (use the `*Async` variants with your own executor).
 * Cancelling a returned future cancels the operation (a selection or checkout stops waiting, a
 * command in flight is abandoned). Once the cluster is closed, futures fail with
 * [MongoClusterClosedException].
 *
 * **Publishers.** [find] and [aggregate] are cold: each subscription runs the command anew at its
 * first `request`, delivers documents as they are requested, and sends a `getMore` only when the
 * subscriber has demand after the documents before it; `onComplete` follows the last document of
 * the batch the server reports exhausted, so a subscriber whose demand ends exactly with the last
 * document is completed without another `request`. `cancel()` kills a cursor still open on the
 * server (`killCursors`) and returns its connection and session; a subscriber whose `onNext`
 * throws is cancelled the same way. Signals to one subscriber are serialized, none comes before
 * `onSubscribe` returns, and they arrive on Mooring's threads (don't block in them); `request(n)`
 * with n ≤ 0 ends the subscription with `onError(IllegalArgumentException)`; a subscription the
 * cluster's close ends gets `onError(MongoClusterClosedException)`.
 */
public interface JavaMongoCollection<T : Any> {
    /** The database name. */
    public val databaseName: String

    /** The collection name. */
    public val collectionName: String

    /** `database.collection`. */
    public val namespace: String

    /** The class of the documents. */
    public val documentClass: Class<T>

    /** The registry the documents' codec comes from. */
    public val codecRegistry: CodecRegistry

    /** The read preference of reads. */
    public val readPreference: ReadPreference

    /** The read concern of reads. */
    public val readConcern: ReadConcern

    /** The write concern of writes. */
    public val writeConcern: WriteConcern

    /** The operations' timeoutMS; null inherits the cluster's. */
    public val timeoutMS: Long?

    /** A copy with documents of [documentClass] from [codecRegistry] ([IllegalArgumentException] when it has no codec for it). */
    public fun <R : Any> withDocumentClass(documentClass: Class<R>): JavaMongoCollection<R>

    /** A copy whose documents' codec comes from [codecRegistry] ([IllegalArgumentException] when it has none for [documentClass]). */
    public fun withCodecRegistry(codecRegistry: CodecRegistry): JavaMongoCollection<T>

    /** A copy with [readPreference]. */
    public fun withReadPreference(readPreference: ReadPreference): JavaMongoCollection<T>

    /** A copy with [readConcern]. */
    public fun withReadConcern(readConcern: ReadConcern): JavaMongoCollection<T>

    /** A copy with [writeConcern]. */
    public fun withWriteConcern(writeConcern: WriteConcern): JavaMongoCollection<T>

    /** A copy with [timeoutMS] (0: no limit; null: the cluster's; negative: [IllegalArgumentException]). */
    public fun withTimeout(timeoutMS: Long?): JavaMongoCollection<T>

    // ---- reads

    /** Every document ([find] with an empty filter). */
    public fun find(): Flow.Publisher<T>

    /** The documents matching [filter] with the default options. */
    public fun find(filter: Bson): Flow.Publisher<T>

    /** The documents matching [filter] with [options] (see [FindOptionsBuilder]). */
    public fun find(filter: Bson, options: FindOptions): Flow.Publisher<T>

    /**
     * The documents matching [filter] (a `find` command, a retryable read) as a cold publisher
     * (see the interface documentation); [IllegalArgumentException] at once for invalid options.
     */
    public fun find(filter: Bson, options: FindOptions, session: ClientSession?): Flow.Publisher<T>

    /** The results of [pipeline] with the default options. */
    public fun aggregate(pipeline: List<Bson>): Flow.Publisher<T>

    /** The results of [pipeline] with [options] (see [AggregateOptionsBuilder]). */
    public fun aggregate(pipeline: List<Bson>, options: AggregateOptions): Flow.Publisher<T>

    /**
     * The results of [pipeline] (an `aggregate` command) as a cold publisher like [find]; a
     * pipeline ending in `$out` or `$merge` is sent with the write concern and returns nothing.
     */
    public fun aggregate(pipeline: List<Bson>, options: AggregateOptions, session: ClientSession?): Flow.Publisher<T>

    /** The changes to this collection with no pipeline and the default options (see the other overload). */
    public fun watch(): JavaChangeStream<T>

    /**
     * The changes to this collection (`watch` with [pipeline] after the `$changeStream` stage and
     * [options]; a null session runs in an implicit one) as a resumable cold publisher of events
     * whose full documents are decoded as [T] (see [JavaChangeStream]).
     */
    public fun watch(pipeline: List<Bson>, options: ChangeStreamOptions, session: ClientSession?): JavaChangeStream<T>

    /** The number of documents in the collection, counted by an aggregate. */
    public fun countDocuments(): CompletableFuture<Long>

    /** The number of documents matching [filter]. */
    public fun countDocuments(filter: Bson): CompletableFuture<Long>

    /** The number of documents matching [filter], with [options]. */
    public fun countDocuments(filter: Bson, options: CountOptions): CompletableFuture<Long>

    /** The number of documents matching [filter] (an aggregate; `$where`, `$near`, `$nearSphere` cannot be used). */
    public fun countDocuments(filter: Bson, options: CountOptions, session: ClientSession?): CompletableFuture<Long>

    /** The document count from the collection's metadata. */
    public fun estimatedDocumentCount(): CompletableFuture<Long>

    /** The document count from the collection's metadata (the `count` command without a query). */
    public fun estimatedDocumentCount(options: EstimatedDocumentCountOptions, session: ClientSession?): CompletableFuture<Long>

    /** The distinct values of [fieldName] among all documents. */
    public fun distinct(fieldName: String): CompletableFuture<List<BsonValue>>

    /** The distinct values of [fieldName] among the documents matching [filter]. */
    public fun distinct(fieldName: String, filter: Bson): CompletableFuture<List<BsonValue>>

    /** The distinct values of [fieldName] among the documents matching [filter] (`distinct`). */
    public fun distinct(fieldName: String, filter: Bson, options: DistinctOptions, session: ClientSession?): CompletableFuture<List<BsonValue>>

    // ---- writes

    /** Inserts [document] with the default options. */
    public fun insertOne(document: T): CompletableFuture<InsertOneResult>

    /** Inserts [document]; an `_id` (ObjectId) is generated, as its first field, when it has none. Fails with [MongoWriteException]. */
    public fun insertOne(document: T, options: InsertOneOptions, session: ClientSession?): CompletableFuture<InsertOneResult>

    /** Inserts [documents] with the default (ordered) options. */
    public fun insertMany(documents: List<T>): CompletableFuture<InsertManyResult>

    /** Inserts [documents] (at least one) in as few commands as the server's limits allow. Fails with [MongoBulkWriteException]. */
    public fun insertMany(documents: List<T>, options: InsertManyOptions, session: ClientSession?): CompletableFuture<InsertManyResult>

    /** Updates the first document matching [filter] with the update operators of [update] (`{$set: ...}`). */
    public fun updateOne(filter: Bson, update: Bson): CompletableFuture<UpdateResult>

    /** Updates the first document matching [filter] (a retryable write). Fails with [MongoWriteException]. */
    public fun updateOne(filter: Bson, update: Update, options: UpdateOptions, session: ClientSession?): CompletableFuture<UpdateResult>

    /** Updates every document matching [filter] with the update operators of [update]. */
    public fun updateMany(filter: Bson, update: Bson): CompletableFuture<UpdateResult>

    /** Updates every document matching [filter] (not retryable). Fails with [MongoWriteException]. */
    public fun updateMany(filter: Bson, update: Update, options: UpdateOptions, session: ClientSession?): CompletableFuture<UpdateResult>

    /** Replaces the first document matching [filter] with [replacement]. */
    public fun replaceOne(filter: Bson, replacement: T): CompletableFuture<UpdateResult>

    /** Replaces the first document matching [filter] (a retryable write); a replacement with update operators: [IllegalArgumentException]. */
    public fun replaceOne(filter: Bson, replacement: T, options: ReplaceOptions, session: ClientSession?): CompletableFuture<UpdateResult>

    /** Deletes the first document matching [filter]. */
    public fun deleteOne(filter: Bson): CompletableFuture<DeleteResult>

    /** Deletes the first document matching [filter] (a retryable write). Fails with [MongoWriteException]. */
    public fun deleteOne(filter: Bson, options: DeleteOptions, session: ClientSession?): CompletableFuture<DeleteResult>

    /** Deletes every document matching [filter]. */
    public fun deleteMany(filter: Bson): CompletableFuture<DeleteResult>

    /** Deletes every document matching [filter] (not retryable). Fails with [MongoWriteException]. */
    public fun deleteMany(filter: Bson, options: DeleteOptions, session: ClientSession?): CompletableFuture<DeleteResult>

    /** Updates one document with the update operators of [update] and completes with it as it was before, or null when none matched. */
    public fun findOneAndUpdate(filter: Bson, update: Bson): CompletableFuture<T?>

    /** Updates one document (`findAndModify`, a retryable write) and completes with it before or after the change, or null when none matched. */
    public fun findOneAndUpdate(filter: Bson, update: Update, options: FindOneAndUpdateOptions, session: ClientSession?): CompletableFuture<T?>

    /** Replaces one document and completes with it as it was before, or null when none matched. */
    public fun findOneAndReplace(filter: Bson, replacement: T): CompletableFuture<T?>

    /** Replaces one document (`findAndModify`, a retryable write) and completes with it before or after, or null when none matched. */
    public fun findOneAndReplace(filter: Bson, replacement: T, options: FindOneAndReplaceOptions, session: ClientSession?): CompletableFuture<T?>

    /** Deletes one document and completes with it, or null when none matched. */
    public fun findOneAndDelete(filter: Bson): CompletableFuture<T?>

    /** Deletes one document (`findAndModify`, a retryable write) and completes with it, or null when none matched. */
    public fun findOneAndDelete(filter: Bson, options: FindOneAndDeleteOptions, session: ClientSession?): CompletableFuture<T?>

    /** Runs [models] ordered (see [WriteModels] for Java factories of the models). */
    public fun bulkWrite(models: List<WriteModel<T>>): CompletableFuture<BulkWriteResult>

    /**
     * Runs [models] (at least one) as `insert`, `update` and `delete` commands split at the
     * server's limits; an ordered bulk write stops at the first write error. Fails with
     * [MongoBulkWriteException] carrying the models' indexes.
     */
    public fun bulkWrite(models: List<WriteModel<T>>, options: BulkWriteOptions, session: ClientSession?): CompletableFuture<BulkWriteResult>

    /** Drops the collection (a missing collection is not an error). */
    public fun drop(): CompletableFuture<Void?>

    /** Drops the collection in [session] when not null. */
    public fun drop(session: ClientSession?): CompletableFuture<Void?>

    /** The underlying Kotlin collection (the same namespace, defaults and codec). */
    public fun asMongoCollection(): MongoCollection<T>
}
