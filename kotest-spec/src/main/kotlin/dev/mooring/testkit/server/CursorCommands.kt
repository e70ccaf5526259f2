package dev.mooring.testkit.server

import org.bson.BsonDocument

/**
 * The cursor commands of a [WireServer]: the reads that open a cursor (`find`, `aggregate`,
 * `listCollections`, `listIndexes`, answered from given [InMemoryCollections] and cut into
 * batches by the server's [WireServer.cursors]) and the commands that continue one (`getMore`,
 * `killCursors`). The cursor's owner is [WireServer.cursorOwner] of the request. Stateless.
 */
object CursorCommands {
    /** The names of the commands [open] answers. */
    val opening: Set<String> = setOf("find", "aggregate", "listCollections", "listIndexes")

    /** The reply to a cursor-opening read, or null when [cmd] is not one. */
    fun open(ctx: RequestContext, db: String, cmd: BsonDocument, collections: InMemoryCollections): BsonDocument? {
        val full = when (ctx.commandName) {
            "find" -> collections.find(db, cmd)
            "aggregate" -> CursorQueries.aggregate(collections, db, cmd)
            "listCollections" -> CursorQueries.listCollections(collections, db, cmd)
            "listIndexes" -> CursorQueries.listIndexes(collections, db, cmd)
            else -> return null
        }
        val tail = if (ctx.commandName == "find") tailOf(db, cmd, collections) else null
        return ctx.server.cursors.open(cmd, full, ctx.server.cursorOwner(ctx), tail)
    }

    /** The reply to `getMore` or `killCursors`, or null for any other command. */
    suspend fun continued(ctx: RequestContext, db: String, cmd: BsonDocument): BsonDocument? = when (ctx.commandName) {
        "getMore" -> ctx.server.cursors.getMore(db, cmd, ctx.server.cursorOwner(ctx))
        "killCursors" -> ctx.server.cursors.killCursors(db, cmd, ctx.server.cursorOwner(ctx))
        else -> null
    }

    /** A tailable find's later results: the matches after the first n, re-read from [collections]. */
    private fun tailOf(db: String, cmd: BsonDocument, collections: InMemoryCollections): (Int) -> List<BsonDocument> {
        val unlimited = cmd.clone().apply { remove("limit") }
        return { n -> collections.find(db, unlimited).getDocument("cursor").getArray("firstBatch").drop(n).map { it.asDocument() } }
    }
}
