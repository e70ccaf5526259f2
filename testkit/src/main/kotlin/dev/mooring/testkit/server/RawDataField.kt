package dev.mooring.testkit.server

import org.bson.BsonDocument

/**
 * The `rawData` command field of MongoDB 8.2 (wire version 27; crud.md, bulk-write.md,
 * index-management.md): on a collection that is not time series it changes nothing, and the test
 * kit has no time-series collections. A server of [WIRE_VERSION] or later takes it on the commands
 * of [COMMANDS] and runs the command without it ([accepted]); an older server, and any other
 * command, refuses it as an IDL-parsed command refuses a field it does not know:
 * `BSON field '<command>.rawData' is an unknown field.` (40415) ([refusal]). Pure.
 */
internal object RawDataField {
    const val NAME: String = "rawData"

    /** The wire version of MongoDB 8.2, the first server that takes `rawData`. */
    const val WIRE_VERSION: Int = 27

    /** The commands MongoDB 8.2 takes `rawData` on (the CRUD, bulk write, index and listing helpers' commands). */
    private val COMMANDS = setOf(
        "find", "aggregate", "count", "distinct", "insert", "update", "delete", "findAndModify", "bulkWrite",
        "createIndexes", "dropIndexes", "listIndexes", "listCollections",
    )

    /** The refusal of [cmd]'s `rawData` by a server of [maxWireVersion], or null when it has none or the server takes it. */
    fun refusal(cmd: BsonDocument, maxWireVersion: Int): BsonDocument? {
        if (!cmd.containsKey(NAME)) return null
        val name = cmd.firstKey
        if (maxWireVersion >= WIRE_VERSION && name in COMMANDS) return null
        return WireServer.error(40415, "Location40415", "BSON field '$name.$NAME' is an unknown field.")
    }

    /** [cmd] as the data engine runs it: without `rawData` (no effect on a collection that is not time series). */
    fun accepted(cmd: BsonDocument): BsonDocument {
        if (!cmd.containsKey(NAME)) return cmd
        val copy = BsonDocument()
        for ((k, v) in cmd) if (k != NAME) copy[k] = v
        return copy
    }
}
