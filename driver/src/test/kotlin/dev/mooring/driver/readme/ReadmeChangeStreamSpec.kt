package dev.mooring.driver.readme

import dev.mooring.driver.ChangeStreamOptions
import dev.mooring.driver.collection
import dev.mooring.driver.database
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.testkit.replset.ReplicaSetSimulator
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.nulls.shouldNotBeNull
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.async
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.take
import kotlinx.serialization.Serializable
import org.bson.BsonDocument
import org.bson.BsonString

@Serializable
data class Film(val title: String)

/** A checkpoint store as the README's example uses it. */
private class Checkpoints {
    var token: BsonDocument? = null

    fun load(): BsonDocument? = token

    fun save(t: BsonDocument?) {
        token = t
    }
}

/** README "Collections: typed documents", change streams: the example as written there, on the test kit's replica set. */
class ReadmeChangeStreamSpec : FunSpec({
    timeout = 120_000

    test("the README's watch example prints the inserts and keeps a checkpoint that resumes after them") {
        ReplicaSetSimulator.start(dataMembers = 2, clusterTime = true).use { rs ->
            val cluster = MongoCluster(MongoClusterSettings.fromUri(rs.seedUri("serverSelectionTimeoutMS=5000")))
            try {
                val movies = cluster.database("films").collection<Film>("movies")
                val checkpoints = Checkpoints()
                val printed = ArrayList<String>()
                coroutineScope {
                    val inserts = BsonDocument("\$match", BsonDocument("operationType", BsonString("insert")))
                    val changes = movies.watch(listOf(inserts), ChangeStreamOptions(resumeAfter = checkpoints.load()))
                    val done = async(start = CoroutineStart.UNDISPATCHED) {
                        changes.take(2).collect { change ->
                            printed += "new movie: ${change.fullDocument?.title}"
                            checkpoints.save(changes.resumeToken)
                        }
                    }
                    while (changes.resumeToken == null) delay(10)
                    movies.insertOne(Film("Arrival"))
                    movies.deleteMany(BsonDocument())
                    movies.insertOne(Film("Dune"))
                    done.await()
                }
                printed shouldContainExactly listOf("new movie: Arrival", "new movie: Dune")
                // a restart resumes after the checkpoint: only what came later
                movies.insertOne(Film("Heat"))
                val after = movies.watch(options = ChangeStreamOptions(resumeAfter = checkpoints.load().shouldNotBeNull()))
                after.take(1).collect { it.fullDocument?.title shouldBe "Heat" }
            } finally {
                cluster.closeSuspending()
            }
        }
    }
})
