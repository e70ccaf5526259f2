package dev.mooring.java.internal

import dev.mooring.driver.AggregateOptions
import dev.mooring.driver.ChangeStreamOptions
import dev.mooring.java.JavaChangeStream
import dev.mooring.driver.BulkWriteOptions
import dev.mooring.driver.BulkWriteResult
import dev.mooring.driver.CountOptions
import dev.mooring.driver.DeleteOptions
import dev.mooring.driver.DeleteResult
import dev.mooring.driver.DistinctOptions
import dev.mooring.driver.EstimatedDocumentCountOptions
import dev.mooring.driver.FindOneAndDeleteOptions
import dev.mooring.driver.FindOneAndReplaceOptions
import dev.mooring.driver.FindOneAndUpdateOptions
import dev.mooring.driver.FindOptions
import dev.mooring.driver.InsertManyOptions
import dev.mooring.driver.InsertManyResult
import dev.mooring.driver.InsertOneOptions
import dev.mooring.driver.InsertOneResult
import dev.mooring.driver.MongoCollection
import dev.mooring.driver.MongoDatabase
import dev.mooring.driver.ReadConcern
import dev.mooring.driver.ReplaceOptions
import dev.mooring.driver.Update
import dev.mooring.driver.UpdateOptions
import dev.mooring.driver.UpdateResult
import dev.mooring.driver.WriteModel
import dev.mooring.java.JavaMongoCollection
import dev.mooring.driver.internal.CallerEncoding
import dev.mooring.sdam.ClientSession
import dev.mooring.sdam.ReadPreference
import dev.mooring.sdam.WriteConcern
import org.bson.BsonDocument
import org.bson.RawBsonDocument
import org.bson.BsonValue
import org.bson.codecs.configuration.CodecRegistry
import org.bson.conversions.Bson
import java.util.concurrent.CompletableFuture
import java.util.concurrent.Flow

/**
 * [JavaMongoCollection] over the driver's collection [collection] of [T], whose codec comes from
 * [registry] ([MongoDatabase.collection] with a codec: the driver encodes, decodes and names
 * undecodable documents); operations on [facade]'s scope. The documents of a write are encoded
 * on the caller's thread ([encodedNow]). Immutable.
 */
internal class DefaultJavaMongoCollection<T : Any>(
    private val facade: DefaultJavaMongoCluster,
    private val collection: MongoCollection<T>,
    private val registry: CodecRegistry,
) : JavaMongoCollection<T> {
    override val databaseName: String get() = collection.databaseName
    override val collectionName: String get() = collection.collectionName
    override val namespace: String get() = collection.namespace
    override val documentClass: Class<T> get() = collection.documentClass.java
    override val codecRegistry: CodecRegistry get() = registry
    override val readPreference: ReadPreference get() = collection.readPreference
    override val readConcern: ReadConcern get() = collection.readConcern
    override val writeConcern: WriteConcern get() = collection.writeConcern
    override val timeoutMS: Long? get() = collection.timeoutMS

    override fun <R : Any> withDocumentClass(documentClass: Class<R>): JavaMongoCollection<R> =
        DefaultJavaMongoCollection(facade, collection.withCodec(RegistryCodecs.codec(registry, documentClass)), registry)

    override fun withCodecRegistry(codecRegistry: CodecRegistry): JavaMongoCollection<T> =
        DefaultJavaMongoCollection(facade, collection.withCodec(RegistryCodecs.codec(codecRegistry, documentClass)), codecRegistry)

    override fun withReadPreference(readPreference: ReadPreference): JavaMongoCollection<T> = copy(collection.withReadPreference(readPreference))

    override fun withReadConcern(readConcern: ReadConcern): JavaMongoCollection<T> = copy(collection.withReadConcern(readConcern))

    override fun withWriteConcern(writeConcern: WriteConcern): JavaMongoCollection<T> = copy(collection.withWriteConcern(writeConcern))

    override fun withTimeout(timeoutMS: Long?): JavaMongoCollection<T> = copy(collection.withTimeout(timeoutMS))

    private fun copy(c: MongoCollection<T>) = DefaultJavaMongoCollection(facade, c, registry)

    /** Encodes the documents of this collection's writes on the caller's thread (one per collection object: its size hint). */
    private val encoding = CallerEncoding()

    /**
     * [document] encoded now, on the caller's thread (later changes to it don't matter, a codec's
     * error is thrown by the call): a [RawBsonDocument], which the driver sends as it is
     * ([MongoCollection]'s contract), handed to it in the place of a [T]. An insert's document
     * ([forInsert]) is given its generated `_id` as it is encoded.
     */
    @Suppress("UNCHECKED_CAST")
    private fun encodedNow(document: T, forInsert: Boolean = false): T =
        (if (forInsert) encoding.encodeForInsert(document, collection.codec) else encoding.encode(document, collection.codec)) as T


    // ---- reads

    override fun find(): Flow.Publisher<T> = find(BsonDocument())

    override fun find(filter: Bson): Flow.Publisher<T> = find(filter, FindOptions(), null)

    override fun find(filter: Bson, options: FindOptions): Flow.Publisher<T> = find(filter, options, null)

    override fun find(filter: Bson, options: FindOptions, session: ClientSession?): Flow.Publisher<T> =
        facade.publisher(collection.find(filter, options, session))

    override fun watch(): JavaChangeStream<T> = watch(emptyList(), ChangeStreamOptions(), null)

    // the collection is typed: its codec decodes fullDocument and fullDocumentBeforeChange
    override fun watch(pipeline: List<Bson>, options: ChangeStreamOptions, session: ClientSession?): JavaChangeStream<T> =
        facade.changeStream(collection.watch(pipeline, options, session))

    override fun aggregate(pipeline: List<Bson>): Flow.Publisher<T> = aggregate(pipeline, AggregateOptions(), null)

    override fun aggregate(pipeline: List<Bson>, options: AggregateOptions): Flow.Publisher<T> = aggregate(pipeline, options, null)

    override fun aggregate(pipeline: List<Bson>, options: AggregateOptions, session: ClientSession?): Flow.Publisher<T> =
        facade.publisher(collection.aggregate(pipeline, options, session))

    override fun countDocuments(): CompletableFuture<Long> = countDocuments(BsonDocument())

    override fun countDocuments(filter: Bson): CompletableFuture<Long> = countDocuments(filter, CountOptions(), null)

    override fun countDocuments(filter: Bson, options: CountOptions): CompletableFuture<Long> = countDocuments(filter, options, null)

    override fun countDocuments(filter: Bson, options: CountOptions, session: ClientSession?): CompletableFuture<Long> =
        facade.operation { collection.countDocuments(filter, options, session) }

    override fun estimatedDocumentCount(): CompletableFuture<Long> = estimatedDocumentCount(EstimatedDocumentCountOptions(), null)

    override fun estimatedDocumentCount(options: EstimatedDocumentCountOptions, session: ClientSession?): CompletableFuture<Long> =
        facade.operation { collection.estimatedDocumentCount(options, session) }

    override fun distinct(fieldName: String): CompletableFuture<List<BsonValue>> = distinct(fieldName, BsonDocument())

    override fun distinct(fieldName: String, filter: Bson): CompletableFuture<List<BsonValue>> = distinct(fieldName, filter, DistinctOptions(), null)

    override fun distinct(fieldName: String, filter: Bson, options: DistinctOptions, session: ClientSession?): CompletableFuture<List<BsonValue>> =
        facade.operation { collection.distinct(fieldName, filter, options, session) }

    // ---- writes (documents are encoded on the caller's thread: an encoding error fails the call at once)

    override fun insertOne(document: T): CompletableFuture<InsertOneResult> = insertOne(document, InsertOneOptions(), null)

    override fun insertOne(document: T, options: InsertOneOptions, session: ClientSession?): CompletableFuture<InsertOneResult> {
        val encoded = encodedNow(document, forInsert = true)
        return facade.operation { collection.insertOne(encoded, options, session) }
    }

    override fun insertMany(documents: List<T>): CompletableFuture<InsertManyResult> = insertMany(documents, InsertManyOptions(), null)

    override fun insertMany(documents: List<T>, options: InsertManyOptions, session: ClientSession?): CompletableFuture<InsertManyResult> {
        @Suppress("UNCHECKED_CAST")
        val encoded = encoding.encodeAllForInsert(documents, collection.codec) as List<T>
        return facade.operation { collection.insertMany(encoded, options, session) }
    }

    override fun updateOne(filter: Bson, update: Bson): CompletableFuture<UpdateResult> = updateOne(filter, Update.Operators(update), UpdateOptions(), null)

    override fun updateOne(filter: Bson, update: Update, options: UpdateOptions, session: ClientSession?): CompletableFuture<UpdateResult> =
        facade.operation { collection.updateOne(filter, update, options, session) }

    override fun updateMany(filter: Bson, update: Bson): CompletableFuture<UpdateResult> = updateMany(filter, Update.Operators(update), UpdateOptions(), null)

    override fun updateMany(filter: Bson, update: Update, options: UpdateOptions, session: ClientSession?): CompletableFuture<UpdateResult> =
        facade.operation { collection.updateMany(filter, update, options, session) }

    override fun replaceOne(filter: Bson, replacement: T): CompletableFuture<UpdateResult> = replaceOne(filter, replacement, ReplaceOptions(), null)

    override fun replaceOne(filter: Bson, replacement: T, options: ReplaceOptions, session: ClientSession?): CompletableFuture<UpdateResult> {
        val encoded = encodedNow(replacement)
        return facade.operation { collection.replaceOne(filter, encoded, options, session) }
    }

    override fun deleteOne(filter: Bson): CompletableFuture<DeleteResult> = deleteOne(filter, DeleteOptions(), null)

    override fun deleteOne(filter: Bson, options: DeleteOptions, session: ClientSession?): CompletableFuture<DeleteResult> =
        facade.operation { collection.deleteOne(filter, options, session) }

    override fun deleteMany(filter: Bson): CompletableFuture<DeleteResult> = deleteMany(filter, DeleteOptions(), null)

    override fun deleteMany(filter: Bson, options: DeleteOptions, session: ClientSession?): CompletableFuture<DeleteResult> =
        facade.operation { collection.deleteMany(filter, options, session) }

    override fun findOneAndUpdate(filter: Bson, update: Bson): CompletableFuture<T?> =
        findOneAndUpdate(filter, Update.Operators(update), FindOneAndUpdateOptions(), null)

    override fun findOneAndUpdate(filter: Bson, update: Update, options: FindOneAndUpdateOptions, session: ClientSession?): CompletableFuture<T?> =
        facade.operation { collection.findOneAndUpdate(filter, update, options, session) }

    override fun findOneAndReplace(filter: Bson, replacement: T): CompletableFuture<T?> =
        findOneAndReplace(filter, replacement, FindOneAndReplaceOptions(), null)

    override fun findOneAndReplace(filter: Bson, replacement: T, options: FindOneAndReplaceOptions, session: ClientSession?): CompletableFuture<T?> {
        val encoded = encodedNow(replacement)
        return facade.operation { collection.findOneAndReplace(filter, encoded, options, session) }
    }

    override fun findOneAndDelete(filter: Bson): CompletableFuture<T?> = findOneAndDelete(filter, FindOneAndDeleteOptions(), null)

    override fun findOneAndDelete(filter: Bson, options: FindOneAndDeleteOptions, session: ClientSession?): CompletableFuture<T?> =
        facade.operation { collection.findOneAndDelete(filter, options, session) }

    override fun bulkWrite(models: List<WriteModel<T>>): CompletableFuture<BulkWriteResult> = bulkWrite(models, BulkWriteOptions(), null)

    override fun bulkWrite(models: List<WriteModel<T>>, options: BulkWriteOptions, session: ClientSession?): CompletableFuture<BulkWriteResult> {
        val encoded = encoding.encodeModels(models, collection.codec)
        return facade.operation { collection.bulkWrite(encoded, options, session) }
    }

    override fun drop(): CompletableFuture<Void?> = drop(null)

    override fun drop(session: ClientSession?): CompletableFuture<Void?> = facade.operation {
        collection.drop(session)
        null
    }

    override fun asMongoCollection(): MongoCollection<T> = collection

    override fun toString(): String = "JavaMongoCollection($namespace, ${documentClass.simpleName})"
}
