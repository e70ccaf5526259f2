@file:OptIn(ExperimentalTime::class)

package dev.mooring.samples.service

import dev.mooring.driver.database
import dev.mooring.sdam.MongoCluster
import kotlin.time.Clock
import kotlin.time.ExperimentalTime

/**
 * What the HTTP layer runs on: the [cluster] (owned by the caller, who closes it), the [store]
 * of bookmarks in database [databaseName], and the [counters] registered on the cluster with
 * `addListener`. [close] removes the listener.
 *
 * **Concurrency.** Thread-safe: the store is stateless, the counters atomic.
 */
class BookmarkService private constructor(
    val cluster: MongoCluster,
    val store: BookmarkStore,
    val counters: CommandCounters,
    private val registration: AutoCloseable,
) : AutoCloseable {
    /** Removes the counters' listener from the cluster. Idempotent. */
    override fun close() = registration.close()

    companion object {
        /** The database the service uses unless told otherwise. */
        const val DEFAULT_DATABASE: String = "mooring_sample"

        /** Registers the counters and creates the collection's indexes (the first command, so they see it). */
        suspend fun start(cluster: MongoCluster, databaseName: String = DEFAULT_DATABASE, clock: Clock = Clock.System): BookmarkService {
            val counters = CommandCounters()
            val registration = cluster.addListener(counters)
            try {
                val store = BookmarkStore(cluster.database(databaseName), clock)
                store.ensureIndexes()
                return BookmarkService(cluster, store, counters, registration)
            } catch (e: Throwable) {
                registration.close()
                throw e
            }
        }
    }
}
