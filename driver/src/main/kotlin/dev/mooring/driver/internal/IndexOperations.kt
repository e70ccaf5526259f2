package dev.mooring.driver.internal

import dev.mooring.driver.CommitQuorum
import dev.mooring.driver.CreateIndexOptions
import dev.mooring.driver.DropIndexOptions
import dev.mooring.driver.IndexModel
import dev.mooring.driver.IndexOptions
import dev.mooring.driver.ListIndexesOptions
import dev.mooring.sdam.ClientSession
import dev.mooring.sdam.ReadPreference
import dev.mooring.sdam.RunCursorCommandOptions
import dev.mooring.sdam.internal.cursor.CursorPage
import kotlinx.coroutines.flow.Flow
import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonDouble
import org.bson.BsonInt32
import org.bson.BsonString
import org.bson.BsonValue

/**
 * A collection's index management (index-management.md, Standard API): `createIndexes`,
 * `dropIndexes` (with the collection's write concern, read-write-concern.md "Other commands that
 * write") and `listIndexes` (a retryable read on the primary, server-selection.md "should-use-primary").
 * Immutable.
 */
internal class IndexOperations(private val defaults: Defaults, private val collection: String) {
    private val cluster get() = defaults.cluster
    private val namespace get() = "${defaults.databaseName}.$collection"

    suspend fun createIndexes(models: List<IndexModel>, options: CreateIndexOptions, session: ClientSession?): List<String> {
        require(models.isNotEmpty()) { "createIndexes needs at least one index model" }
        val specs = models.map { spec(it) }
        val cmd = BsonDocument("createIndexes", BsonString(collection)).append("indexes", BsonArray(specs))
        val deadline = MultiCommandDeadline(defaults)
        options.commitQuorum?.let { quorum ->
            // index-management.md: refused before sending to a server older than 4.4, which could ignore it
            val limits = defaults.limits.get(cluster, deadline.next())
            require(limits.maxWireVersion >= ServerLimits.WIRE_VERSION_4_4) {
                "commitQuorum needs MongoDB 4.4 or later; the primary's wire version is ${limits.maxWireVersion}"
            }
            cmd["commitQuorum"] = quorumValue(quorum)
        }
        cmd.opt("maxTimeMS", defaults.legacyMaxTimeMS(options.maxTimeMS)).opt("comment", options.comment).optRawData(options.rawData)
        Concerns.applyWriteConcern(cmd, defaults.writeConcern, cluster.settings.writeConcern, defaults.timeoutSet)
        AdminCommands.write(cluster, defaults.databaseName, cmd, session, deadline.next(), namespace)
        return specs.map { it.getString("name").value }
    }

    fun listIndexes(options: ListIndexesOptions, session: ClientSession?): Flow<BsonDocument> {
        val cursor = BsonDocument()
        options.batchSize?.let { cursor["batchSize"] = BsonInt32(it) }
        val cmd = BsonDocument("listIndexes", BsonString(collection)).append("cursor", cursor).opt("comment", options.comment).optRawData(options.rawData)
        // index-management.md: the comment goes with every getMore of the cursor
        val cursorOptions = defaults.cursorOptions(ReadPreference.PRIMARY, session, options.timeoutMode, options.batchSize, options.comment)
        // a collection that does not exist has no indexes
        return AdminCommands.documents(CursorPage.pages(cluster, defaults.databaseName, cmd, cursorOptions, retryableRead = true), missingNamespaceIsEmpty = true)
    }

    /** dropIndexes with `index` [index] (a name, `*` or a key pattern); NamespaceNotFound is not an error (drops are idempotent). */
    suspend fun dropIndexes(index: BsonValue, options: DropIndexOptions, session: ClientSession?) {
        val cmd = BsonDocument("dropIndexes", BsonString(collection)).append("index", index)
        cmd.opt("maxTimeMS", defaults.legacyMaxTimeMS(options.maxTimeMS)).opt("comment", options.comment).optRawData(options.rawData)
        Concerns.applyWriteConcern(cmd, defaults.writeConcern, cluster.settings.writeConcern, defaults.timeoutSet)
        AdminCommands.write(cluster, defaults.databaseName, cmd, session, defaults.timeoutMS, namespace, missingNamespaceIsOk = true)
    }

    companion object {
        /** The `createIndexes` specification of [model]: `key`, `name` (given or generated), then the options set. */
        fun spec(model: IndexModel): BsonDocument {
            val keys = model.keys.toDoc()
            val o: IndexOptions = model.options
            val spec = BsonDocument("key", keys).append("name", BsonString(o.name ?: IndexNames.generate(keys)))
            spec.opt("background", o.background).opt("unique", o.unique).opt("sparse", o.sparse).opt("expireAfterSeconds", o.expireAfterSeconds)
            spec.optDoc("partialFilterExpression", o.partialFilterExpression).optDoc("collation", o.collation).opt("hidden", o.hidden)
            spec.optDoc("wildcardProjection", o.wildcardProjection).optDoc("storageEngine", o.storageEngine).opt("v", o.version)
            spec.optDoc("weights", o.weights).opt("default_language", o.defaultLanguage?.let { BsonString(it) })
            spec.opt("language_override", o.languageOverride?.let { BsonString(it) }).opt("textIndexVersion", o.textIndexVersion)
            spec.opt("2dsphereIndexVersion", o.sphereIndexVersion).opt("bits", o.bits)
            spec.opt("min", o.min?.let { BsonDouble(it) }).opt("max", o.max?.let { BsonDouble(it) })
            return spec
        }

        private fun quorumValue(q: CommitQuorum): BsonValue = when (q) {
            is CommitQuorum.Members -> BsonInt32(q.count)
            is CommitQuorum.Named -> BsonString(q.name)
        }
    }
}
