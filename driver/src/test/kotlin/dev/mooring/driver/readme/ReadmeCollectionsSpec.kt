@file:OptIn(ExperimentalTime::class, ExperimentalUuidApi::class)

package dev.mooring.driver.readme

import de.bwaldvogel.mongo.MongoServer
import de.bwaldvogel.mongo.backend.memory.MemoryBackend
import dev.mooring.driver.FindOptions
import dev.mooring.driver.collection
import dev.mooring.driver.database
import dev.mooring.driver.query.all
import dev.mooring.driver.query.and
import dev.mooring.driver.query.descending
import dev.mooring.driver.query.eq
import dev.mooring.driver.query.gt
import dev.mooring.driver.query.push
import dev.mooring.driver.query.set
import dev.mooring.driver.query.update
import dev.mooring.sdam.MongoCluster
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import kotlin.time.Clock
import kotlin.time.ExperimentalTime
import kotlin.time.Instant
import kotlin.uuid.ExperimentalUuidApi
import kotlin.uuid.Uuid
import kotlinx.coroutines.flow.toList
import kotlinx.serialization.SerialName
import kotlinx.serialization.Serializable
import org.bson.BsonDocument
import org.bson.BsonInt32

@Serializable
data class Movie(@SerialName("_id") val id: Uuid, val title: String, @SerialName("y") val year: Int,
                 val released: Instant, val tags: List<String> = emptyList())

/** README "Collections: typed documents": the example as written there, against mongo-java-server. */
class ReadmeCollectionsSpec : FunSpec({
    timeout = 120_000

    test("the README's collections example runs and stores what it says") {
        val server = MongoServer(MemoryBackend())
        server.bind("127.0.0.1", 0)
        val cluster = MongoCluster("mongodb://127.0.0.1:${server.localAddress.port}/?serverSelectionTimeoutMS=5000")
        try {
            // --- as in the README
            val movies = cluster.database("films").collection<Movie>("movies")
            movies.insertOne(Movie(Uuid.random(), "Arrival", 2016, Clock.System.now(), listOf("sci-fi")))
            val titles = ArrayList<String>()
            movies.find((Movie::year gt 2000) and (Movie::tags all listOf("sci-fi")),
                        FindOptions(sort = descending(Movie::year), limit = 10))
                .collect { titles += it.title }
            movies.updateOne(Movie::title eq "Arrival", update(set(Movie::year, 2017), push(Movie::tags, "drama")))
            movies.createIndex(BsonDocument("y", BsonInt32(-1)))
            // ---
            titles shouldBe listOf("Arrival")
            val stored = cluster.database("films").collection("movies").find().toList().single()
            stored.getInt32("y").value shouldBe 2017
            stored["_id"]!!.isBinary shouldBe true
            stored.getBinary("_id").type shouldBe 4.toByte()
            stored["released"]!!.isDateTime shouldBe true
            stored.getArray("tags").map { it.asString().value } shouldBe listOf("sci-fi", "drama")
            cluster.database("films").collection("movies").listIndexNames() shouldBe listOf("_id_", "y_-1")
        } finally {
            cluster.closeSuspending()
            server.shutdownNow()
        }
    }
})
