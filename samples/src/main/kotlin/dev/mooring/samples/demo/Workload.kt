package dev.mooring.samples.demo

import dev.mooring.sdam.MongoCluster
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Job
import kotlinx.coroutines.delay
import kotlinx.coroutines.isActive
import kotlinx.coroutines.launch
import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonInt64
import org.bson.BsonString

/**
 * The demo's workload: [callers] coroutines, each alternating an insert of a small document
 * and a find of it by `_id` on `mooring_demo.items`, as fast as the cluster answers. Successes
 * and failures go to [stats]; after a failure a caller pauses briefly (so a failover does
 * not spin).
 */
class Workload(private val cluster: MongoCluster, private val callers: Int, private val stats: DemoStats) {
    /** Launches the callers in [scope]; cancel the returned job to stop them. */
    fun start(scope: CoroutineScope): Job = scope.launch {
        repeat(callers) { caller -> launch { callerLoop(caller) } }
    }

    private suspend fun CoroutineScope.callerLoop(caller: Int) {
        var n = 0L
        while (isActive) {
            val id = "c$caller-${n++}"
            try {
                val doc = BsonDocument("_id", BsonString(id)).append("caller", BsonInt32(caller)).append("n", BsonInt64(n))
                cluster.runCommand(DATABASE, BsonDocument("insert", BsonString(COLLECTION)).append("documents", BsonArray(listOf(doc))))
                stats.operationSucceeded()
                cluster.runCommand(DATABASE, BsonDocument("find", BsonString(COLLECTION)).append("filter", BsonDocument("_id", BsonString(id))).append("limit", BsonInt32(1)))
                stats.operationSucceeded()
            } catch (e: CancellationException) {
                throw e
            } catch (e: Exception) {
                stats.operationFailed(e)
                delay(100)
            }
        }
    }

    companion object {
        /** The database the workload writes to. */
        const val DATABASE: String = "mooring_demo"

        /** The collection the workload writes to (and `--watch` watches). */
        const val COLLECTION: String = "items"
    }
}
