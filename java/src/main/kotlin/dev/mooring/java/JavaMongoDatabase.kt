package dev.mooring.java

import dev.mooring.driver.ChangeStreamOptions
import dev.mooring.driver.MongoDatabase
import dev.mooring.driver.ReadConcern
import dev.mooring.driver.gridfs.GridFSBucketOptions
import dev.mooring.sdam.ClientSession
import dev.mooring.sdam.MongoClusterClosedException
import dev.mooring.sdam.ReadPreference
import dev.mooring.sdam.WriteConcern
import org.bson.BsonDocument
import org.bson.codecs.configuration.CodecRegistry
import org.bson.conversions.Bson
import java.util.concurrent.CompletableFuture

/**
 * The Java face of a driver [MongoDatabase], from [JavaMongoCluster.getDatabase]: a name plus the
 * defaults its collections inherit (read preference, [ReadConcern], [WriteConcern], timeoutMS,
 * and the [CodecRegistry] of typed collections, [JavaCodecRegistries.DEFAULT] unless changed).
 *
 * ```java
 * JavaMongoCollection<Person> people = cluster.getDatabase("app").getCollection("people", Person.class);
 * people.insertOne(new Person("Ada", 36)).join();
 * ```
 *
 * **Concurrency.** Immutable: every method is thread-safe, the `with…` copies never change the
 * original, creating one (or a collection) does no I/O, and any number of operations may run
 * concurrently. Operations run as coroutines of the cluster facade's scope (on
 * `Dispatchers.Default`) and their futures complete on Mooring's threads: don't block in their
 * callbacks. Cancelling a returned future cancels the operation. Once the cluster is closed, the
 * futures fail with [MongoClusterClosedException].
 */
public interface JavaMongoDatabase {
    /** The database name. */
    public val name: String

    /** The read preference of the collections' reads (the cluster settings' unless changed). */
    public val readPreference: ReadPreference

    /** The read concern of the collections' reads (the cluster's `readConcernLevel` unless changed). */
    public val readConcern: ReadConcern

    /** The write concern of writes (the cluster's `writeConcern` unless changed). */
    public val writeConcern: WriteConcern

    /** The operations' timeoutMS; null inherits the cluster's. */
    public val timeoutMS: Long?

    /** The registry typed collections take their codec from. */
    public val codecRegistry: CodecRegistry

    /** The collection [name] with [BsonDocument] documents (no I/O; [IllegalArgumentException] for an empty name). */
    public fun getCollection(name: String): JavaMongoCollection<BsonDocument>

    /**
     * The collection [name] with documents of [documentClass], encoded and decoded with the codec
     * [codecRegistry] gives for it (records and POJOs with the default registry). No I/O;
     * [IllegalArgumentException] naming the class when the registry has no codec for it.
     */
    public fun <T : Any> getCollection(name: String, documentClass: Class<T>): JavaMongoCollection<T>

    /** The GridFS bucket `fs` of this database with the default options (no I/O; [JavaGridFSBucket]). */
    public fun getGridFSBucket(): JavaGridFSBucket

    /** The GridFS bucket of this database with [options] (its null options inherit this database's; no I/O). */
    public fun getGridFSBucket(options: GridFSBucketOptions): JavaGridFSBucket

    /** A copy whose typed collections take their codecs from [codecRegistry]. */
    public fun withCodecRegistry(codecRegistry: CodecRegistry): JavaMongoDatabase

    /** A copy with [readPreference]. */
    public fun withReadPreference(readPreference: ReadPreference): JavaMongoDatabase

    /** A copy with [readConcern]. */
    public fun withReadConcern(readConcern: ReadConcern): JavaMongoDatabase

    /** A copy with [writeConcern]. */
    public fun withWriteConcern(writeConcern: WriteConcern): JavaMongoDatabase

    /** A copy with [timeoutMS] (0: no limit; null: the cluster's; negative: [IllegalArgumentException]). */
    public fun withTimeout(timeoutMS: Long?): JavaMongoDatabase

    /** [runCommand] on the primary. */
    public fun runCommand(command: Bson): CompletableFuture<BsonDocument>

    /** [runCommand] without an explicit session. */
    public fun runCommand(command: Bson, readPreference: ReadPreference): CompletableFuture<BsonDocument>

    /**
     * Runs [command] on this database as given (no read or write concern added; run-command.md)
     * on a server selected by [readPreference] (the database's is not inherited), in [session]
     * when not null, under the database's timeoutMS; completes with the reply or exceptionally
     * with the errors `MongoCluster.runCommand` documents.
     */
    public fun runCommand(command: Bson, readPreference: ReadPreference, session: ClientSession?): CompletableFuture<BsonDocument>

    /** The changes to this database with no pipeline and the default options (see the other overload). */
    public fun watch(): JavaChangeStream<BsonDocument>

    /**
     * The changes to every collection of this database but the system ones (`MongoDatabase.watch`,
     * change-streams.md `Database.watch`: `aggregate: 1`; MongoDB 4.0+), with [pipeline] after the
     * `$changeStream` stage and [options], under this database's read preference, read concern and
     * timeoutMS, in [session] (a null one runs in an implicit session), as a resumable cold
     * publisher of events whose full documents are [BsonDocument]s (see [JavaChangeStream]). No
     * I/O until a subscriber requests.
     */
    public fun watch(pipeline: List<Bson>, options: ChangeStreamOptions, session: ClientSession?): JavaChangeStream<BsonDocument>

    /** [drop] without an explicit session. */
    public fun drop(): CompletableFuture<Void?>

    /** Drops the database (`dropDatabase` with this database's write concern), in [session] when not null. */
    public fun drop(session: ClientSession?): CompletableFuture<Void?>

    /** The underlying Kotlin database (its defaults; typed Kotlin collections use kotlinx.serialization, not [codecRegistry]). */
    public fun asMongoDatabase(): MongoDatabase
}
