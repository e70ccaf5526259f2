package dev.mooring.driver.internal

import dev.mooring.driver.DatabaseInfo
import dev.mooring.sdam.ClientSession
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.ReadPreference
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonValue
import org.bson.conversions.Bson

/** The `listDatabases` admin command and its typed reply (retryable-reads.md lists it as a retryable read). Stateless. */
internal object ListDatabasesCommand {
    suspend fun run(
        cluster: MongoCluster,
        filter: Bson,
        nameOnly: Boolean?,
        authorizedDatabases: Boolean?,
        comment: BsonValue?,
        session: ClientSession?,
        timeoutMS: Long?,
    ): List<DatabaseInfo> {
        val cmd = BsonDocument("listDatabases", BsonInt32(1))
        filter.toDoc().takeIf { it.isNotEmpty() }?.let { cmd["filter"] = it }
        cmd.opt("nameOnly", nameOnly).opt("authorizedDatabases", authorizedDatabases).opt("comment", comment)
        val reply = cluster.runRetryableRead("admin", cmd, ReadPreference.PRIMARY, session, timeoutMS)
        val entries = reply["databases"]?.takeIf { it.isArray }?.asArray().orEmpty()
        return entries.filterIsInstance<BsonDocument>().map { d ->
            DatabaseInfo(
                name = d.getString("name").value,
                sizeOnDisk = d["sizeOnDisk"]?.takeIf { it.isNumber }?.asNumber()?.longValue(),
                empty = d["empty"]?.takeIf { it.isBoolean }?.asBoolean()?.value,
                document = d,
            )
        }
    }
}
