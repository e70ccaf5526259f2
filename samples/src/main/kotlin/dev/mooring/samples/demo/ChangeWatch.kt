package dev.mooring.samples.demo

import dev.mooring.driver.ChangeStreamDocument
import dev.mooring.driver.ChangeStreamOptions
import dev.mooring.driver.collection
import dev.mooring.driver.database
import dev.mooring.sdam.MongoCluster
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Job
import kotlinx.coroutines.launch
import org.bson.BsonDocument
import java.util.concurrent.atomic.AtomicLong

/**
 * The demo's change stream (`--watch`, key `w`): while on, a `watch()` on the workload's
 * collection ([Workload.DATABASE].[Workload.COLLECTION]), each event counted in [recent]'s
 * change-stream summary line (updated in place, as the workload inserts thousands a second)
 * and handed to [onChange] (the `--json` lines). The stream resumes by itself across the
 * replica set's step-downs; turning it off cancels the collector, which kills the server cursor.
 * An error that ends the stream (a server without change streams, for one) is shown in [recent]
 * and turns it off.
 *
 * Thread-safe: [toggle] may be called from the key reader's thread.
 */
class ChangeWatch(
    private val cluster: MongoCluster,
    private val recent: RecentEvents,
    private val scope: CoroutineScope,
    private val onChange: (ChangeStreamDocument<BsonDocument>) -> Unit = {},
) {
    private var job: Job? = null

    /** Change events received over the whole run. */
    val events: AtomicLong = AtomicLong()

    /** Whether the stream is on. */
    val isOn: Boolean get() = synchronized(this) { job?.isActive == true }

    /** Turns the stream on, or off when it is on; returns whether it is now on. */
    fun toggle(): Boolean = synchronized(this) {
        if (job?.isActive == true) {
            job!!.cancel()
            job = null
            recent.note("Change stream on $NAMESPACE closed after ${events.get()} events")
            false
        } else {
            job = scope.launch { collect() }
            true
        }
    }

    /** Turns the stream off (no-op when it is off). */
    fun stop() = synchronized(this) {
        job?.cancel()
        job = null
    }

    private suspend fun collect() {
        val items = cluster.database(Workload.DATABASE).collection<BsonDocument>(Workload.COLLECTION)
        recent.note("Change stream on $NAMESPACE opening")
        try {
            items.watch(options = ChangeStreamOptions(maxAwaitTimeMS = 500)).collect { change ->
                recent.change(NAMESPACE, change, events.incrementAndGet())
                onChange(change)
            }
        } catch (e: CancellationException) {
            throw e
        } catch (e: Exception) {
            recent.note("Change stream on $NAMESPACE failed: ${e.javaClass.simpleName}: ${e.message}")
        }
    }

    companion object {
        /** The namespace watched. */
        const val NAMESPACE: String = "${Workload.DATABASE}.${Workload.COLLECTION}"

        /** Why the embedded server cannot show a change stream. */
        const val NEEDS_REPLICA_SET: String =
            "change streams need a replica set: add --replica-set or give a replica set's URI (the embedded mongo-java-server has none)"
    }
}
