package dev.mooring.driver.internal

import dev.mooring.driver.AggregateOptions
import dev.mooring.driver.ReadConcern
import dev.mooring.driver.SearchIndexModel
import dev.mooring.sdam.ClientSession
import dev.mooring.sdam.RunCursorCommandOptions
import dev.mooring.sdam.WriteConcern
import dev.mooring.sdam.internal.cursor.CursorPage
import kotlinx.coroutines.flow.Flow
import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonString

/**
 * A collection's Atlas search index management (index-management.md "Search Indexes"): the
 * commands and the `$listSearchIndexes` aggregate are sent without read or write concern, which
 * the search index service rejects. Immutable.
 */
internal class SearchIndexOperations(private val defaults: Defaults, private val collection: String) {
    private val cluster get() = defaults.cluster
    private val namespace get() = "${defaults.databaseName}.$collection"

    suspend fun create(models: List<SearchIndexModel>, session: ClientSession?): List<String> {
        // no models: sent as given, the server decides (index-management's tests expect `indexes: []` on the wire)
        val indexes = BsonArray(
            models.map { m ->
                BsonDocument("definition", m.definition.toDoc()).opt("name", m.name?.let { BsonString(it) }).opt("type", m.type?.let { BsonString(it) })
            },
        )
        val cmd = BsonDocument("createSearchIndexes", BsonString(collection)).append("indexes", indexes)
        val reply = AdminCommands.write(cluster, defaults.databaseName, cmd, session, defaults.timeoutMS, namespace)!!
        val created = reply["indexesCreated"]?.takeIf { it.isArray }?.asArray().orEmpty()
        return created.mapNotNull { (it as? BsonDocument)?.getString("name", null)?.value }
    }

    suspend fun update(name: String, definition: BsonDocument, session: ClientSession?) {
        val cmd = BsonDocument("updateSearchIndex", BsonString(collection)).append("name", BsonString(name)).append("definition", definition)
        AdminCommands.write(cluster, defaults.databaseName, cmd, session, defaults.timeoutMS, namespace)
    }

    /** index-management.md: NamespaceNotFound is suppressed (a drop is idempotent). */
    suspend fun drop(name: String, session: ClientSession?) {
        val cmd = BsonDocument("dropSearchIndex", BsonString(collection)).append("name", BsonString(name))
        AdminCommands.write(cluster, defaults.databaseName, cmd, session, defaults.timeoutMS, namespace, missingNamespaceIsOk = true)
    }

    /** `[{$listSearchIndexes: {name?}}]` as an aggregate with [options], on the collection's read preference, without read concern. */
    fun list(name: String?, options: AggregateOptions, session: ClientSession?): Flow<BsonDocument> {
        val stage = BsonDocument("\$listSearchIndexes", BsonDocument().opt("name", name?.let { BsonString(it) }))
        val cmd = AggregateCommand.command(
            collection, BsonArray(listOf(stage)), options, ReadConcern.DEFAULT, WriteConcern.DEFAULT, WriteConcern.DEFAULT, defaults.timeoutSet,
            defaults.legacyMaxTimeMS(options.maxTimeMS),
        )
        val cursor = defaults.cursorOptions(defaults.readPreference, session, options.timeoutMode, options.batchSize, options.comment)
        return AdminCommands.documents(CursorPage.pages(cluster, defaults.databaseName, cmd, cursor, retryableRead = true))
    }
}
