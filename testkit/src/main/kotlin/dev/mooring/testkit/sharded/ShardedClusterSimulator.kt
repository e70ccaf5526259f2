package dev.mooring.testkit.sharded

import dev.mooring.testkit.server.InMemoryCollections

import dev.mooring.testkit.server.WireServer
import dev.mooring.testkit.server.ClusterTimeKeeper
import org.bson.BsonDocument

/**
 * A sharded deployment as a driver sees it: [mongoses] routers on 127.0.0.1, each a
 * [WireServer] answering hello as a mongos ([MongosHello.mongos]) with the built-in commands
 * behind it. The routers share one [InMemoryCollections] (a single shard behind them all: data
 * and transactions written through one router are seen through every other, so a transaction
 * pinned to one router can be committed through another with its `recoveryToken`).
 *
 * Thread-safe; [close] closes every router and is idempotent.
 */
class ShardedClusterSimulator private constructor(
    /** The routers, in seed order. */
    val mongoses: List<WireServer>,
    /** The cluster's logical clock, shared by its routers, when started with `clusterTime = true`. */
    val clusterTime: ClusterTimeKeeper?,
) : AutoCloseable {
    /**
     * The connection string naming the first router only, or every router when [multiple]
     * (the unified format's `useMultipleMongoses`), with [options] (`key=value&...`) appended.
     */
    fun seedUri(options: String = "", multiple: Boolean = false): String {
        val hosts = (if (multiple) mongoses else mongoses.take(1)).joinToString(",") { it.address.toString() }
        return "mongodb://$hosts/" + if (options.isEmpty()) "" else "?$options"
    }

    /** Sets the failCommand fail point on the first router (the one a single-router URI names). */
    fun configureFailPoint(command: BsonDocument) = mongoses.first().configureFailPoint(command)

    override fun close() = mongoses.forEach { it.close() }

    companion object {
        /**
         * Starts [count] routers (at least 1) reporting wire versions 0..[maxWireVersion] (below 9,
         * MongoDB 4.4, they leave the RetryableWriteError label to drivers); with [clusterTime]
         * they report the cluster's cluster time ([ClusterTimeKeeper]).
         */
        suspend fun start(count: Int = 2, maxWireVersion: Int = 21, clusterTime: Boolean = false): ShardedClusterSimulator {
            require(count >= 1) { "a sharded cluster needs at least one mongos, got $count" }
            require(maxWireVersion >= 6) { "a mongos reports wire version 6 (MongoDB 3.6) or later, got $maxWireVersion" }
            val clock = if (clusterTime) ClusterTimeKeeper() else null
            val started = ArrayList<WireServer>()
            val shard = InMemoryCollections()
            try {
                repeat(count) {
                    val s = WireServer.start(collections = shard)
                    s.sendsRecoveryTokens = true
                    s.maxWireVersion = maxWireVersion
                    s.hello = MongosHello::mongos
                    s.handler = { ctx, db, cmd -> MongosCommands.answer(ctx, db, cmd) }
                    s.labelsRetryableWriteErrors = maxWireVersion >= 9
                    s.clusterTime = clock
                    started += s
                }
            } catch (e: Throwable) {
                started.forEach { it.close() }
                throw e
            }
            return ShardedClusterSimulator(started, clock)
        }
    }
}
