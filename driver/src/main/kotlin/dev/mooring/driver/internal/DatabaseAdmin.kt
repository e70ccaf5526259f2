package dev.mooring.driver.internal

import kotlinx.coroutines.flow.emitAll
import kotlinx.coroutines.flow.flow
import dev.mooring.driver.AggregateOptions
import dev.mooring.driver.CreateCollectionOptions
import dev.mooring.driver.ListCollectionsOptions
import dev.mooring.sdam.ClientSession
import dev.mooring.sdam.ReadPreference
import dev.mooring.sdam.RunCursorCommandOptions
import dev.mooring.sdam.internal.cursor.CursorPage
import kotlinx.coroutines.flow.Flow
import org.bson.BsonBoolean
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString
import org.bson.conversions.Bson

/**
 * A database's collection management: `create` (with the database's write concern),
 * `listCollections` (enumerate-collections.md: a retryable read on the primary, whatever the
 * database's read preference) and the database-level `aggregate` (crud.md: `aggregate: 1`).
 * Immutable.
 */
internal class DatabaseAdmin(private val defaults: Defaults) {
    private val cluster get() = defaults.cluster

    suspend fun createCollection(name: String, o: CreateCollectionOptions, session: ClientSession?) {
        Names.checkCollection(name)
        if (o.encryptedFields != null) {
            throw UnsupportedOperationException("encryptedFields (Queryable Encryption) is not supported by Mooring; collection ${defaults.databaseName}.$name was not created")
        }
        val cmd = BsonDocument("create", BsonString(name))
        cmd.opt("capped", o.capped).opt("size", o.size).opt("max", o.max).optDoc("storageEngine", o.storageEngine)
        cmd.optDoc("validator", o.validator).opt("validationLevel", o.validationLevel?.let { BsonString(it.value) })
        cmd.opt("validationAction", o.validationAction?.let { BsonString(it.value) }).optDoc("indexOptionDefaults", o.indexOptionDefaults)
        cmd.opt("viewOn", o.viewOn?.let { BsonString(it) })
        o.pipeline?.let { cmd["pipeline"] = it.toArray() }
        cmd.optDoc("collation", o.collation)
        o.timeseries?.let { t ->
            val ts = BsonDocument("timeField", BsonString(t.timeField)).opt("metaField", t.metaField?.let { BsonString(it) })
            ts.opt("granularity", t.granularity?.let { BsonString(it.value) })
            ts.opt("bucketMaxSpanSeconds", t.bucketMaxSpanSeconds).opt("bucketRoundingSeconds", t.bucketRoundingSeconds)
            cmd["timeseries"] = ts
        }
        cmd.opt("expireAfterSeconds", o.expireAfterSeconds)
        o.clusteredIndex?.let { c ->
            cmd["clusteredIndex"] = BsonDocument("key", c.key.toDoc()).append("unique", BsonBoolean.valueOf(c.unique)).opt("name", c.name?.let { BsonString(it) })
        }
        o.changeStreamPreAndPostImages?.let { cmd["changeStreamPreAndPostImages"] = BsonDocument("enabled", BsonBoolean.valueOf(it)) }
        cmd.opt("comment", o.comment)
        Concerns.applyWriteConcern(cmd, defaults.writeConcern, cluster.settings.writeConcern, defaults.timeoutSet)
        AdminCommands.write(cluster, defaults.databaseName, cmd, session, defaults.timeoutMS, "${defaults.databaseName}.$name", operationName = "createCollection")
    }

    fun listCollections(filter: Bson, o: ListCollectionsOptions, session: ClientSession?): Flow<BsonDocument> {
        val cursor = BsonDocument()
        o.batchSize?.let { cursor["batchSize"] = BsonInt32(it) }
        val cmd = BsonDocument("listCollections", BsonInt32(1)).append("cursor", cursor)
        filter.toDoc().takeIf { it.isNotEmpty() }?.let { cmd["filter"] = it }
        cmd.opt("nameOnly", o.nameOnly).opt("authorizedCollections", o.authorizedCollections).opt("comment", o.comment).optRawData(o.rawData)
        // enumerate-collections.md: getMores inherit the comment; it is not attached to them
        val cursorOptions = defaults.cursorOptions(ReadPreference.PRIMARY, session, o.timeoutMode, o.batchSize, comment = null)
        return AdminCommands.documents(CursorPage.pages(cluster, defaults.databaseName, cmd, cursorOptions, retryableRead = true))
    }

    /** `aggregate: 1` with [pipeline]: the collection helper's command and rules, on the database. */
    fun aggregate(pipeline: List<Bson>, options: AggregateOptions, session: ClientSession?): Flow<BsonDocument> {
        val stages = pipeline.toArray()
        val writes = AggregateCommand.writes(stages)
        // the collection helper's command, with the collection-less target `1` in the place of the name
        val cmd = AggregateCommand.command(
            "", stages, options, defaults.readConcern, defaults.writeConcern, cluster.settings.writeConcern, defaults.timeoutSet,
            defaults.legacyMaxTimeMS(options.maxTimeMS),
        )
        cmd["aggregate"] = BsonInt32(1)
        if (!writes) {
            return AdminCommands.documents(CursorPage.pages(cluster, defaults.databaseName, cmd, defaults.cursorOptions(defaults.readPreference, session, options.timeoutMode, options.batchSize, options.comment), retryableRead = true))
        }
        // a pipeline that writes: its read preference is decided when the flow is collected
        return AdminCommands.documents(flow {
            val readPreference = AggregateCommand.writeStageReadPreference(cluster, defaults.readPreference)
            emitAll(CursorPage.pages(cluster, defaults.databaseName, cmd, defaults.cursorOptions(readPreference, session, options.timeoutMode, options.batchSize, options.comment), retryableRead = false))
        })
    }

    companion object {
        /**
         * enumerate-collections.md: `nameOnly: true` unless the filter names anything but `name`
         * (the server applies nameOnly before the filter); the same holds for `listDatabases`.
         */
        fun nameOnlyFor(filter: Bson): Boolean = filter.toDoc().keys.all { it == "name" }
    }
}
