package dev.mooring.driver

import dev.mooring.driver.internal.DatabaseAdmin
import dev.mooring.driver.internal.ListDatabasesCommand
import dev.mooring.sdam.ClientSession
import dev.mooring.sdam.MongoCluster
import org.bson.BsonDocument
import org.bson.BsonValue
import org.bson.conversions.Bson

/**
 * One database of a [listDatabases] reply. [sizeOnDisk] and [empty] are null when the server
 * left them out (with `nameOnly`); [document] is the reply's entry as sent (with `shards` on a
 * mongos, for instance). Immutable; safe to share between threads.
 */
public data class DatabaseInfo(
    /** The database name. */
    val name: String,
    /** Its size on disk, in bytes. */
    val sizeOnDisk: Long?,
    /** True when it holds no data. */
    val empty: Boolean?,
    /** The whole entry. */
    val document: BsonDocument,
)

/**
 * The databases of this cluster (the `listDatabases` command on `admin`, a retryable read on the
 * primary: server-selection.md's "should-use-primary" helpers ignore read preferences).
 * [filter] matches the entries (`name`, `sizeOnDisk`, `empty`, `shards`); [nameOnly] returns
 * names only; [authorizedDatabases] lists only the databases the user may act on (without
 * the `listDatabases` privilege the server does so by default). Fields left null are not sent.
 * [timeoutMS] as [MongoCluster.runCommand]'s (null: the cluster's). Server errors are thrown as
 * the cluster's `MongoCommandException`. Safe to call concurrently.
 */
public suspend fun MongoCluster.listDatabases(
    filter: Bson = BsonDocument(),
    nameOnly: Boolean? = null,
    authorizedDatabases: Boolean? = null,
    comment: BsonValue? = null,
    session: ClientSession? = null,
    timeoutMS: Long? = null,
): List<DatabaseInfo> = ListDatabasesCommand.run(this, filter, nameOnly, authorizedDatabases, comment, session, timeoutMS)

/**
 * The names of this cluster's databases ([listDatabases] with `nameOnly: true`, unless [filter]
 * names a field other than `name`, which `nameOnly` would leave out). Safe to call concurrently.
 */
public suspend fun MongoCluster.listDatabaseNames(
    filter: Bson = BsonDocument(),
    authorizedDatabases: Boolean? = null,
    session: ClientSession? = null,
    timeoutMS: Long? = null,
): List<String> = listDatabases(filter, nameOnly = DatabaseAdmin.nameOnlyFor(filter).takeIf { it }, authorizedDatabases = authorizedDatabases, session = session, timeoutMS = timeoutMS).map { it.name }
