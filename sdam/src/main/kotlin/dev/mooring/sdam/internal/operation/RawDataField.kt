package dev.mooring.sdam.internal.operation

import dev.mooring.cmap.Connection
import dev.mooring.sdam.WireVersions
import org.bson.BsonDocument

/**
 * The one home of the `rawData` rule of crud.md, bulk-write.md and index-management.md: the
 * option "MUST NOT be sent when connected to pre-8.2 servers". A helper's command carries
 * `rawData` when its caller set the option; each attempt passes the command through [forConnection]
 * on the connection it is sent over, which leaves the field out for a server older than MongoDB 8.2
 * (wire version [WireVersions.MONGODB_8_2]). The generic `runCommand` does not call it (its command is
 * sent as given, run-command.md). Stateless.
 */
internal object RawDataField {
    const val NAME: String = "rawData"

    /** [command] as sent over [connection]: without `rawData` (a copy) when the server is older than 8.2, else [command] itself. */
    fun forConnection(command: BsonDocument, connection: Connection, fallbackWireVersion: Int): BsonDocument {
        if (!command.containsKey(NAME)) return command
        val wire = connection.description?.maxWireVersion ?: fallbackWireVersion
        if (wire >= WireVersions.MONGODB_8_2) return command
        val copy = BsonDocument()
        for ((k, v) in command) if (k != NAME) copy[k] = v
        return copy
    }
}
