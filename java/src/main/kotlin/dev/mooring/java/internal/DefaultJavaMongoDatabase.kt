package dev.mooring.java.internal

import dev.mooring.driver.ChangeStreamOptions
import dev.mooring.driver.MongoDatabase
import dev.mooring.java.JavaChangeStream
import dev.mooring.driver.ReadConcern
import dev.mooring.driver.gridfs.GridFSBucketOptions
import dev.mooring.driver.gridfs.gridFSBucket
import dev.mooring.java.JavaGridFSBucket
import dev.mooring.java.JavaMongoCollection
import dev.mooring.java.JavaMongoDatabase
import dev.mooring.sdam.ClientSession
import dev.mooring.sdam.ReadPreference
import dev.mooring.sdam.WriteConcern
import org.bson.BsonDocument
import org.bson.codecs.configuration.CodecRegistry
import org.bson.conversions.Bson
import java.util.concurrent.CompletableFuture

/** [JavaMongoDatabase] over the driver's [database], its operations on [facade]'s scope. Immutable. */
internal class DefaultJavaMongoDatabase(
    private val facade: DefaultJavaMongoCluster,
    private val database: MongoDatabase,
    override val codecRegistry: CodecRegistry,
) : JavaMongoDatabase {
    override val name: String get() = database.name
    override val readPreference: ReadPreference get() = database.readPreference
    override val readConcern: ReadConcern get() = database.readConcern
    override val writeConcern: WriteConcern get() = database.writeConcern
    override val timeoutMS: Long? get() = database.timeoutMS

    override fun getCollection(name: String): JavaMongoCollection<BsonDocument> = getCollection(name, BsonDocument::class.java)

    override fun <T : Any> getCollection(name: String, documentClass: Class<T>): JavaMongoCollection<T> =
        DefaultJavaMongoCollection(facade, database.collection(name, RegistryCodecs.codec(codecRegistry, documentClass)), codecRegistry)

    override fun getGridFSBucket(): JavaGridFSBucket = getGridFSBucket(GridFSBucketOptions())

    override fun getGridFSBucket(options: GridFSBucketOptions): JavaGridFSBucket = DefaultJavaGridFSBucket(facade, database.gridFSBucket(options))

    override fun withCodecRegistry(codecRegistry: CodecRegistry): JavaMongoDatabase = DefaultJavaMongoDatabase(facade, database, codecRegistry)

    override fun withReadPreference(readPreference: ReadPreference): JavaMongoDatabase = copy(database.withReadPreference(readPreference))

    override fun withReadConcern(readConcern: ReadConcern): JavaMongoDatabase = copy(database.withReadConcern(readConcern))

    override fun withWriteConcern(writeConcern: WriteConcern): JavaMongoDatabase = copy(database.withWriteConcern(writeConcern))

    override fun withTimeout(timeoutMS: Long?): JavaMongoDatabase = copy(database.withTimeout(timeoutMS))

    private fun copy(d: MongoDatabase) = DefaultJavaMongoDatabase(facade, d, codecRegistry)

    override fun runCommand(command: Bson): CompletableFuture<BsonDocument> = runCommand(command, ReadPreference.PRIMARY, null)

    override fun runCommand(command: Bson, readPreference: ReadPreference): CompletableFuture<BsonDocument> = runCommand(command, readPreference, null)

    override fun runCommand(command: Bson, readPreference: ReadPreference, session: ClientSession?): CompletableFuture<BsonDocument> =
        facade.operation { database.runCommand(command, readPreference, session) }

    override fun watch(): JavaChangeStream<BsonDocument> = watch(emptyList(), ChangeStreamOptions(), null)

    override fun watch(pipeline: List<Bson>, options: ChangeStreamOptions, session: ClientSession?): JavaChangeStream<BsonDocument> =
        facade.changeStream(database.watch(pipeline, options, session))

    override fun drop(): CompletableFuture<Void?> = drop(null)

    override fun drop(session: ClientSession?): CompletableFuture<Void?> = facade.operation {
        database.drop(session)
        null
    }

    override fun asMongoDatabase(): MongoDatabase = database

    override fun toString(): String = "JavaMongoDatabase($name)"
}
