package dev.mooring.driver

import dev.mooring.driver.internal.DefaultMongoDatabase
import dev.mooring.sdam.ClientSession
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.ReadPreference
import dev.mooring.sdam.WriteConcern
import kotlin.reflect.KClass
import kotlinx.coroutines.flow.Flow
import kotlinx.serialization.modules.SerializersModule
import org.bson.BsonDocument
import org.bson.codecs.Codec
import org.bson.conversions.Bson

/**
 * One database of a [MongoCluster], from [MongoCluster.database]: a name plus the defaults its
 * collections inherit (read preference, [ReadConcern], [WriteConcern], timeoutMS, the
 * serializers module of typed documents). The defaults start as the cluster settings' (`readPreference`,
 * `readConcernLevel`, `writeConcern`, `timeoutMS`) and are changed by the `with…` copies.
 *
 * **Concurrency.** Immutable: every member is thread-safe, a copy never changes the original,
 * and any number of operations may run concurrently. Creating one does no I/O.
 */
public interface MongoDatabase {
    /** The database name. */
    public val name: String

    /** The cluster the operations run on. */
    public val cluster: MongoCluster

    /** The read preference of reads (the cluster settings' unless changed). */
    public val readPreference: ReadPreference

    /** The read concern of reads (the cluster's `readConcernLevel` unless changed). */
    public val readConcern: ReadConcern

    /** The write concern of writes (the cluster's `writeConcern` unless changed). */
    public val writeConcern: WriteConcern

    /** The operations' timeoutMS; null inherits the cluster's (client-side-operations-timeout.md). */
    public val timeoutMS: Long?

    /** The serializers module typed collections are created with ([MooringSerializers.module] unless changed). */
    public val serializersModule: SerializersModule

    /** The collection [name] with [BsonDocument] documents. */
    public fun collection(name: String): MongoCollection<BsonDocument>

    /**
     * The collection [name] with documents of [documentClass], encoded and decoded with
     * kotlinx.serialization (bson-kotlinx) through [serializersModule]. Fails with
     * [IllegalArgumentException] naming the class when it has no serializer.
     */
    public fun <T : Any> collection(name: String, documentClass: KClass<T>): MongoCollection<T>

    /**
     * The collection [name] with documents of [codec]'s encoder class, encoded and decoded with
     * [codec] (an `org.bson` codec, e.g. from a `CodecRegistry` for Java records and POJOs; it must
     * be thread-safe, as the BSON library's are). A reply document the codec cannot decode fails
     * with [DocumentDecodingException] naming the namespace and the field. No I/O.
     */
    public fun <T : Any> collection(name: String, codec: Codec<T>): MongoCollection<T>

    /**
     * Runs [command] on this database and returns the reply (run-command.md: sent as given, no
     * read or write concern added, on a server selected by [readPreference], primary unless given:
     * the database's read preference is not inherited). The database's timeoutMS applies.
     */
    public suspend fun runCommand(command: Bson, readPreference: ReadPreference = ReadPreference.PRIMARY, session: ClientSession? = null): BsonDocument

    /** Drops the database (`dropDatabase`, with this database's write concern). */
    public suspend fun drop(session: ClientSession? = null)

    /**
     * Creates the collection [name] (`create`, on the primary, with this database's write
     * concern) with [options]. A collection that exists already fails with the server's
     * NamespaceExists (48) as `MongoCommandException`; a write concern error is thrown as
     * [MongoWriteConcernException]. [CreateCollectionOptions.encryptedFields] is refused with
     * [UnsupportedOperationException] before anything is sent.
     */
    public suspend fun createCollection(name: String, options: CreateCollectionOptions = CreateCollectionOptions(), session: ClientSession? = null)

    /**
     * The collections (and views) of this database matching [filter] (`listCollections`, a
     * retryable read on the primary whatever [readPreference], enumerate-collections.md), one
     * document each with at least `name`, `type` and (without `nameOnly`) `options` and `info`, as
     * a cold flow like [MongoCollection.find]'s. From MongoDB 4.4 on, the `idIndex` specification
     * in them has no `ns` field.
     */
    public fun listCollections(filter: Bson = BsonDocument(), options: ListCollectionsOptions = ListCollectionsOptions(), session: ClientSession? = null): Flow<BsonDocument>

    /**
     * The names of the collections matching [filter] ([listCollections] with `nameOnly: true`
     * unless [filter] names a field other than `name`, which `nameOnly` would leave out).
     */
    public suspend fun listCollectionNames(filter: Bson = BsonDocument(), authorizedCollections: Boolean? = null, session: ClientSession? = null): List<String>

    /**
     * The results of [pipeline] run on the database (`aggregate: 1`, crud.md "Database-level
     * aggregation", for collection-less stages such as `$currentOp`, `$listLocalSessions` or
     * `$documents`), as a cold flow, with the rules of [MongoCollection.aggregate]: this database's
     * read preference and read concern, and for a pipeline ending in `$out`/`$merge` its write concern.
     */
    public fun aggregate(pipeline: List<Bson>, options: AggregateOptions = AggregateOptions(), session: ClientSession? = null): Flow<BsonDocument>

    /**
     * The changes to every collection of this database but the system ones (change-streams.md
     * `Database.watch`, `aggregate: 1`; MongoDB 4.0+) as a resumable cold flow of events (see
     * [ChangeStream]), with this database's read preference, read concern and timeoutMS.
     */
    public fun watch(pipeline: List<Bson> = emptyList(), options: ChangeStreamOptions = ChangeStreamOptions(), session: ClientSession? = null): ChangeStream<BsonDocument>

    /** A copy with [readPreference]. */
    public fun withReadPreference(readPreference: ReadPreference): MongoDatabase

    /** A copy with [readConcern]. */
    public fun withReadConcern(readConcern: ReadConcern): MongoDatabase

    /** A copy with [writeConcern]. */
    public fun withWriteConcern(writeConcern: WriteConcern): MongoDatabase

    /** A copy with [timeoutMS] (0: no limit; null: the cluster's; negative: [IllegalArgumentException]). */
    public fun withTimeout(timeoutMS: Long?): MongoDatabase

    /** A copy whose typed collections use [module] (add your contextual serializers to [MooringSerializers.module]). */
    public fun withSerializersModule(module: SerializersModule): MongoDatabase
}

/**
 * The database [name] of this cluster (no I/O), with the cluster settings' read concern, write
 * concern and timeoutMS as defaults. Fails with [IllegalArgumentException] for an empty name or
 * one containing `.`, `/`, `\`, `"`, `$`, a space or a NUL.
 */
public fun MongoCluster.database(name: String): MongoDatabase = DefaultMongoDatabase.of(this, name)

/**
 * The changes to every database of this cluster but `admin`, `local` and `config`
 * (change-streams.md `MongoClient.watch`: `aggregate: 1` on `admin` with `allChangesForCluster`;
 * MongoDB 4.0+) as a resumable cold flow of events (see [ChangeStream]), with the cluster settings'
 * read preference and read concern; [timeoutMS] as [MongoCluster.runCommand]'s (null: the cluster's).
 */
public fun MongoCluster.watch(
    pipeline: List<Bson> = emptyList(),
    options: ChangeStreamOptions = ChangeStreamOptions(),
    session: ClientSession? = null,
    timeoutMS: Long? = null,
): ChangeStream<BsonDocument> = DefaultMongoDatabase.watchCluster(this, pipeline, options, session, timeoutMS)

/** The collection [name] with documents of [T] ([MongoDatabase.collection]). */
public inline fun <reified T : Any> MongoDatabase.collection(name: String): MongoCollection<T> = collection(name, T::class)
