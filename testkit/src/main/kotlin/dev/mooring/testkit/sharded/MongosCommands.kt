package dev.mooring.testkit.sharded

import dev.mooring.testkit.server.Reply
import dev.mooring.testkit.server.RequestContext
import dev.mooring.testkit.server.WireServer
import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonInt64
import org.bson.BsonString

/**
 * The commands only a router answers, as a [WireServer] handler for mongos (and for mongos
 * behind a load balancer): `checkMetadataConsistency` (MongoDB 7.0+, wire version 21), a
 * cursor-creating command whose cursor lists the metadata inconsistencies found; the test kit's
 * one-shard cluster has none, so its first batch is empty and the cursor is exhausted. Below
 * wire version 21 the command does not exist (CommandNotFound from the built-ins). Stateless.
 */
object MongosCommands {
    /** The reply to a router-only command, or null to let the server's built-ins answer. */
    fun answer(ctx: RequestContext, db: String, cmd: BsonDocument): Reply? {
        if (ctx.commandName != "checkMetadataConsistency" || ctx.server.maxWireVersion < CHECK_METADATA_CONSISTENCY_WIRE_VERSION) return null
        val full = BsonDocument("cursor", BsonDocument("firstBatch", BsonArray()).append("id", BsonInt64(0)).append("ns", BsonString("$db.\$cmd.checkMetadataConsistency")))
            .append("ok", BsonInt32(1))
        return Reply.Document(ctx.server.cursors.open(cmd, full, ctx.server.cursorOwner(ctx)))
    }

    private const val CHECK_METADATA_CONSISTENCY_WIRE_VERSION = 21
}
