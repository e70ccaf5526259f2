@file:OptIn(ExperimentalTime::class)

package dev.mooring.driver.query

import de.bwaldvogel.mongo.MongoServer
import de.bwaldvogel.mongo.backend.memory.MemoryBackend
import dev.mooring.driver.FindOptions
import dev.mooring.driver.MongoDatabase
import dev.mooring.driver.UpdateResult
import dev.mooring.driver.collection
import dev.mooring.driver.database
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe
import kotlin.time.ExperimentalTime
import kotlinx.coroutines.flow.toList
import org.bson.BsonDocument
import org.bson.types.ObjectId

/** Typed filters, sorts and updates through a collection, against mongo-java-server's query engine. */
class QueryEndToEndSpec : FunSpec({
    timeout = 120_000

    suspend fun withDatabase(block: suspend (MongoDatabase) -> Unit) {
        val server = MongoServer(MemoryBackend())
        server.bind("127.0.0.1", 0)
        val cluster = MongoCluster(MongoClusterSettings.fromUri("mongodb://127.0.0.1:${server.localAddress.port}/?serverSelectionTimeoutMS=5000"))
        try {
            block(cluster.database("films"))
        } finally {
            cluster.closeSuspending()
            server.shutdownNow()
        }
    }

    test("find with a typed filter and sort; updateOne with typed operators; the stored document uses the serial names") {
        withDatabase { db ->
            val movies = db.collection<Movie>("movies")
            val alien = Movie(ObjectId(), "Alien", 1979, 8.5, Minutes(117), Genre.SCIFI, director = Director("Ridley Scott", 1937), tags = listOf("space"))
            val aliens = Movie(ObjectId(), "Aliens", 1986, 8.4, Minutes(137), Genre.SCIFI, director = Director("James Cameron", 1954))
            val heat = Movie(ObjectId(), "Heat", 1995, 8.3, Minutes(170), Genre.DRAMA, director = Director("Michael Mann", 1943))
            movies.insertMany(listOf(alien, aliens, heat))

            movies.find(
                and(Movie::genre eq Genre.SCIFI, Movie::runtime eq Minutes(137)),
            ).toList() shouldContainExactly listOf(aliens)
            movies.find(
                (Movie::year gt 1980) and ((Movie::director / Director::birthYear) lt 1950),
                FindOptions(sort = descending(Movie::year)),
            ).toList() shouldContainExactly listOf(heat)
            movies.find(Movie::tags all listOf("space"), FindOptions(sort = ascending(Movie::year))).toList() shouldContainExactly listOf(alien)

            movies.updateOne(Movie::id eq alien.id, update(set(Movie::rating, 9.0), push(Movie::tags, "horror"), inc(Movie::views, 5L))) shouldBe
                UpdateResult.Acknowledged(1, 1, null)
            movies.find(Movie::id eq alien.id).toList() shouldContainExactly listOf(alien.copy(rating = 9.0, tags = listOf("space", "horror"), views = 5))

            val stored = db.collection<BsonDocument>("movies").find(Movie::id eq alien.id).toList().single()
            stored.getInt32("y").value shouldBe 1979
            stored.getDocument("director").getInt32("born").value shouldBe 1937
            stored.getInt32("runtime").value shouldBe 117
            stored.getString("genre").value shouldBe "sci-fi"
        }
    }
})
