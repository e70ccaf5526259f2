package dev.mooring.driver.internal

import dev.mooring.sdam.internal.HelperCommand
import dev.mooring.driver.AggregateOptions
import dev.mooring.driver.ChangeStream
import dev.mooring.driver.ChangeStreamOptions
import dev.mooring.driver.CreateCollectionOptions
import dev.mooring.driver.ListCollectionsOptions
import dev.mooring.driver.MongoCollection
import dev.mooring.driver.MongoDatabase
import dev.mooring.driver.MooringSerializers
import dev.mooring.driver.ReadConcern
import dev.mooring.sdam.ClientSession
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.ReadPreference
import dev.mooring.sdam.WriteConcern
import kotlin.reflect.KClass
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.toList
import kotlinx.serialization.modules.SerializersModule
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.codecs.Codec
import org.bson.conversions.Bson

/** [MongoDatabase] over [defaults]. Immutable. */
internal class DefaultMongoDatabase private constructor(private val defaults: Defaults) : MongoDatabase {
    override val name: String get() = defaults.databaseName
    override val cluster: MongoCluster get() = defaults.cluster
    override val readPreference: ReadPreference get() = defaults.readPreference
    override val readConcern: ReadConcern get() = defaults.readConcern
    override val writeConcern: WriteConcern get() = defaults.writeConcern
    override val timeoutMS: Long? get() = defaults.timeoutMS
    override val serializersModule: SerializersModule get() = defaults.module

    override fun collection(name: String): MongoCollection<BsonDocument> = collection(name, BsonDocument::class)

    override fun <T : Any> collection(name: String, documentClass: KClass<T>): MongoCollection<T> {
        Names.checkCollection(name)
        return DefaultMongoCollection(defaults, name, DocumentCodec.of(documentClass, defaults.module, "${defaults.databaseName}.$name"))
    }

    override fun <T : Any> collection(name: String, codec: Codec<T>): MongoCollection<T> {
        Names.checkCollection(name)
        return DefaultMongoCollection(defaults, name, DocumentCodec(codec.encoderClass.kotlin, codec, "${defaults.databaseName}.$name"))
    }

    override suspend fun runCommand(command: Bson, readPreference: ReadPreference, session: ClientSession?): BsonDocument =
        defaults.cluster.runCommand(defaults.databaseName, command, readPreference, session, defaults.timeoutMS)

    override suspend fun drop(session: ClientSession?) {
        val cmd = BsonDocument("dropDatabase", BsonInt32(1))
        Concerns.applyWriteConcern(cmd, defaults.writeConcern, defaults.cluster.settings.writeConcern, defaults.timeoutSet)
        HelperCommand.run(defaults.cluster, defaults.databaseName, cmd, ReadPreference.PRIMARY, session, defaults.timeoutMS)
    }

    override suspend fun createCollection(name: String, options: CreateCollectionOptions, session: ClientSession?): Unit =
        DatabaseAdmin(defaults).createCollection(name, options, session)

    override fun listCollections(filter: Bson, options: ListCollectionsOptions, session: ClientSession?): Flow<BsonDocument> =
        DatabaseAdmin(defaults).listCollections(filter, options, session)

    override suspend fun listCollectionNames(filter: Bson, authorizedCollections: Boolean?, session: ClientSession?): List<String> {
        val options = ListCollectionsOptions(nameOnly = DatabaseAdmin.nameOnlyFor(filter).takeIf { it }, authorizedCollections = authorizedCollections)
        return DatabaseAdmin(defaults).listCollections(filter, options, session).toList().map { it.getString("name").value }
    }

    override fun aggregate(pipeline: List<Bson>, options: AggregateOptions, session: ClientSession?): Flow<BsonDocument> =
        DatabaseAdmin(defaults).aggregate(pipeline, options, session)

    override fun watch(pipeline: List<Bson>, options: ChangeStreamOptions, session: ClientSession?): ChangeStream<BsonDocument> =
        DefaultChangeStream(ChangeStreamCommand(defaults, null, false, pipeline, options, session), ChangeStreamEvents(DocumentCodec.of(BsonDocument::class, defaults.module, name)))

    override fun withReadPreference(readPreference: ReadPreference): MongoDatabase = DefaultMongoDatabase(defaults.copy(readPreference = readPreference))

    override fun withReadConcern(readConcern: ReadConcern): MongoDatabase = DefaultMongoDatabase(defaults.copy(readConcern = readConcern))

    override fun withWriteConcern(writeConcern: WriteConcern): MongoDatabase = DefaultMongoDatabase(defaults.copy(writeConcern = writeConcern))

    override fun withTimeout(timeoutMS: Long?): MongoDatabase = DefaultMongoDatabase(defaults.copy(timeoutMS = timeoutMS))

    override fun withSerializersModule(module: SerializersModule): MongoDatabase = DefaultMongoDatabase(defaults.copy(module = module))

    override fun toString(): String = "MongoDatabase($name)"

    companion object {
        /** `MongoCluster.watch`: a database-less stream on `admin` with `allChangesForCluster`, under the cluster settings' defaults. */
        fun watchCluster(cluster: MongoCluster, pipeline: List<Bson>, options: ChangeStreamOptions, session: ClientSession?, timeoutMS: Long?): ChangeStream<BsonDocument> {
            val defaults = (of(cluster, "admin") as DefaultMongoDatabase).defaults.copy(timeoutMS = timeoutMS)
            val command = ChangeStreamCommand(defaults, null, true, pipeline, options, session)
            return DefaultChangeStream(command, ChangeStreamEvents(DocumentCodec.of(BsonDocument::class, defaults.module, "admin")))
        }

        fun of(cluster: MongoCluster, name: String): MongoDatabase {
            Names.checkDatabase(name)
            val s = cluster.settings
            return DefaultMongoDatabase(
                Defaults(
                    cluster = cluster,
                    databaseName = name,
                    readPreference = s.readPreference,
                    readConcern = ReadConcern(s.readConcernLevel),
                    writeConcern = s.writeConcern,
                    timeoutMS = null,
                    module = MooringSerializers.module,
                    limits = ServerLimitsSource(),
                ),
            )
        }
    }
}

/** The naming rules of databases and collections (the server's; checked early for a clear message). Stateless. */
internal object Names {
    private val DATABASE_FORBIDDEN = charArrayOf('/', '\\', '.', ' ', '"', '$', '\u0000')

    fun checkDatabase(name: String) {
        require(name.isNotEmpty()) { "a database name must not be empty" }
        require(name.none { it in DATABASE_FORBIDDEN }) { "invalid database name '$name': it must not contain any of / \\ . space \" \$ or NUL" }
    }

    fun checkCollection(name: String) {
        require(name.isNotEmpty()) { "a collection name must not be empty" }
        require('\u0000' !in name) { "a collection name must not contain NUL" }
    }
}
