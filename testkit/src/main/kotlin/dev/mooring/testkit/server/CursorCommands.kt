package dev.mooring.testkit.server

import dev.mooring.testkit.server.changes.ChangeStreamCursors
import org.bson.BsonDocument

/**
 * The cursor commands of a [WireServer]: the reads that open a cursor (`find`, `aggregate`,
 * `listCollections`, `listIndexes`: answered in full by given [InMemoryCollections], then cut
 * into batches by the server's [WireServer.cursors], so a cursor lives on the server that
 * opened it) and the commands that continue one (`getMore`, `killCursors`). The cursor's owner
 * is [WireServer.cursorOwner] of the request. Stateless.
 */
object CursorCommands {
    /** The names of the commands [open] answers. */
    val opening: Set<String> = setOf("find", "aggregate", "listCollections", "listIndexes")

    /** The reply to a cursor-opening read, or null when [cmd] is not one. */
    fun open(ctx: RequestContext, db: String, cmd: BsonDocument, collections: InMemoryCollections): BsonDocument? {
        if (ctx.commandName !in opening) return null
        if (ChangeStreamCursors.isChangeStream(cmd)) {
            val hello = ctx.server.hello(ctx, BsonDocument("hello", org.bson.BsonInt32(1)))
            return ctx.server.changeStreams.open(db, cmd, ctx.server.cursorOwner(ctx), collections.changeEvents, collections::documents, hello)
        }
        val whole = unbatched(cmd)
        val full = collections.execute(db, whole, maxWireVersion = ctx.server.maxWireVersion) ?: return null
        val tail = if (ctx.commandName == "find") tailOf(db, whole, collections, ctx.server.maxWireVersion) else null
        return ctx.server.cursors.open(cmd, full, ctx.server.cursorOwner(ctx), tail)
    }

    /** The reply to `getMore` or `killCursors`, or null for any other command. */
    suspend fun continued(ctx: RequestContext, db: String, cmd: BsonDocument): BsonDocument? = when (ctx.commandName) {
        "getMore" -> ctx.server.changeStreams.getMore(db, cmd, ctx.server.cursorOwner(ctx)) ?: ctx.server.cursors.getMore(db, cmd, ctx.server.cursorOwner(ctx))
        "killCursors" -> ctx.server.changeStreams.killCursors(db, cmd, ctx.server.cursorOwner(ctx)) ?: ctx.server.cursors.killCursors(db, cmd, ctx.server.cursorOwner(ctx))
        else -> null
    }

    /** [cmd] asking for every result in its first batch (the server's cursors do the batching). */
    private fun unbatched(cmd: BsonDocument): BsonDocument = cmd.clone().apply {
        remove("batchSize")
        remove("singleBatch")
        (get("cursor") as? BsonDocument)?.let { put("cursor", BsonDocument()) }
    }

    /** A tailable find's later results: the matches after the first n, re-read from [collections]. */
    private fun tailOf(db: String, whole: BsonDocument, collections: InMemoryCollections, wireVersion: Int): (Int) -> List<BsonDocument> {
        val unlimited = whole.clone().apply { remove("limit") }
        return { n -> collections.execute(db, unlimited, maxWireVersion = wireVersion)?.getDocument("cursor")?.getArray("firstBatch")?.drop(n)?.map { it.asDocument() } ?: emptyList() }
    }
}
