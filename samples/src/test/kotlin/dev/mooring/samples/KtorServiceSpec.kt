@file:OptIn(ExperimentalTime::class, ExperimentalUuidApi::class)

package dev.mooring.samples

import de.bwaldvogel.mongo.MongoServer
import de.bwaldvogel.mongo.backend.memory.MemoryBackend
import dev.mooring.cmap.MongoCommandException
import dev.mooring.driver.database
import dev.mooring.samples.demo.Deployment
import dev.mooring.samples.service.Bookmark
import dev.mooring.samples.service.BookmarkPage
import dev.mooring.samples.service.BookmarkService
import dev.mooring.samples.service.CommandCounters
import dev.mooring.samples.service.ErrorBody
import dev.mooring.samples.service.Health
import dev.mooring.samples.service.ServiceArgs
import dev.mooring.samples.service.ServiceJson
import dev.mooring.samples.service.bookmarkModule
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.collections.shouldHaveSize
import io.kotest.matchers.longs.shouldBeGreaterThan
import io.kotest.matchers.nulls.shouldNotBeNull
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.ktor.client.HttpClient
import io.ktor.client.request.delete
import io.ktor.client.request.get
import io.ktor.client.request.patch
import io.ktor.client.request.post
import io.ktor.client.request.setBody
import io.ktor.client.statement.HttpResponse
import io.ktor.client.statement.bodyAsText
import io.ktor.http.ContentType
import io.ktor.http.HttpHeaders
import io.ktor.http.HttpStatusCode
import io.ktor.http.contentType
import io.ktor.server.testing.ApplicationTestBuilder
import io.ktor.server.testing.testApplication
import kotlinx.coroutines.flow.single
import org.bson.BsonBinarySubType
import org.bson.BsonDocument
import org.bson.BsonString
import java.util.concurrent.atomic.AtomicLong
import kotlin.time.Clock
import kotlin.time.ExperimentalTime
import kotlin.time.Instant
import kotlin.uuid.ExperimentalUuidApi
import kotlin.uuid.Uuid
import kotlin.uuid.toJavaUuid

/** A clock 1.000123456 s further on at each reading, from 2026-01-01T00:00:00.000123456Z (finer than BSON's milliseconds). */
private class SteppingClock : Clock {
    private val readings = AtomicLong()
    override fun now(): Instant {
        val n = readings.getAndIncrement()
        return Instant.fromEpochSeconds(1_767_225_600 + n, 123_456 * (n + 1))
    }
}

private suspend fun HttpClient.postJson(path: String, json: String): HttpResponse = post(path) { contentType(ContentType.Application.Json); setBody(json) }
private suspend fun HttpClient.patchJson(path: String, json: String): HttpResponse = patch(path) { contentType(ContentType.Application.Json); setBody(json) }
private suspend inline fun <reified T> HttpResponse.decoded(): T = ServiceJson.json.decodeFromString<T>(bodyAsText())
private suspend fun HttpResponse.error(): ErrorBody = decoded()

/** The Ktor bookmark service (samples/ktor-service) driven through Ktor's testApplication against the embedded mongo-java-server. */
class KtorServiceSpec : FunSpec({
    timeout = 120_000

    /** Starts the embedded server, a cluster on it and the service, runs [block] in a testApplication, then closes all. */
    fun serviceTest(block: suspend ApplicationTestBuilder.(BookmarkService) -> Unit) {
        Deployment.Embedded.start().use { deployment ->
            MongoCluster(MongoClusterSettings.fromUri(deployment.uri + "&serverSelectionTimeoutMS=5000")).use { cluster ->
                testApplication {
                    BookmarkService.start(cluster, clock = SteppingClock()).use { service ->
                        application { bookmarkModule(service) }
                        block(service)
                    }
                }
            }
        }
    }

    test("every endpoint round trip: create, get, list with tag and limit, update, delete; Uuid and Instant stored as BSON binary 4 and date") {
        serviceTest { service ->
            val created = client.postJson("/bookmarks", """{"url": "https://kotlinlang.org", "title": "Kotlin", "tags": ["kotlin", "lang"]}""")
            created.status shouldBe HttpStatusCode.Created
            val kotlin = created.decoded<Bookmark>()
            created.headers[HttpHeaders.Location] shouldBe "/bookmarks/${kotlin.id}"
            kotlin.url shouldBe "https://kotlinlang.org"
            kotlin.tags shouldContainExactly listOf("kotlin", "lang")
            kotlin.createdAt shouldBe Instant.parse("2026-01-01T00:00:00Z")
            kotlin.updatedAt shouldBe null
            created.bodyAsText() shouldContain "\"createdAt\":\"2026-01-01T00:00:00Z\""

            // as stored: _id a standard UUID binary, createdAt a BSON date
            val raw = service.cluster.database(BookmarkService.DEFAULT_DATABASE).collection("bookmarks")
                .find(BsonDocument("url", BsonString("https://kotlinlang.org"))).single()
            raw.getBinary("_id").type shouldBe BsonBinarySubType.UUID_STANDARD.value
            raw.getBinary("_id").asUuid() shouldBe kotlin.id.toJavaUuid()
            raw.getDateTime("createdAt").value shouldBe kotlin.createdAt.toEpochMilliseconds()

            // the created bookmark is what a read returns: times cut to BSON's milliseconds before the insert
            client.get("/bookmarks/${kotlin.id}").let { it.status shouldBe HttpStatusCode.OK; it.decoded<Bookmark>() shouldBe kotlin }

            val ktor = client.postJson("/bookmarks", """{"url": "https://ktor.io", "title": "Ktor", "tags": ["kotlin", "http"]}""").decoded<Bookmark>()
            val mongo = client.postJson("/bookmarks", """{"url": "https://www.mongodb.com", "title": "MongoDB"}""").decoded<Bookmark>()
            mongo.tags shouldBe emptyList()

            client.get("/bookmarks").decoded<BookmarkPage>().let { page ->
                page.total shouldBe 3
                page.items shouldContainExactly listOf(mongo, ktor, kotlin) // newest first
            }
            client.get("/bookmarks?tag=kotlin").decoded<BookmarkPage>() shouldBe BookmarkPage(2, listOf(ktor, kotlin))
            client.get("/bookmarks?tag=kotlin&limit=1").decoded<BookmarkPage>() shouldBe BookmarkPage(2, listOf(ktor))
            client.get("/bookmarks?tag=nothing").decoded<BookmarkPage>() shouldBe BookmarkPage(0, emptyList())

            val patched = client.patchJson("/bookmarks/${ktor.id}", """{"title": "Ktor framework", "tags": ["http"]}""")
            patched.status shouldBe HttpStatusCode.OK
            val updated = patched.decoded<Bookmark>()
            updated shouldBe ktor.copy(title = "Ktor framework", tags = listOf("http"), updatedAt = updated.updatedAt)
            updated.updatedAt.shouldNotBeNull() shouldBe Instant.parse("2026-01-01T00:00:03Z")
            client.get("/bookmarks/${ktor.id}").decoded<Bookmark>() shouldBe updated
            client.get("/bookmarks?tag=kotlin").decoded<BookmarkPage>().items shouldContainExactly listOf(kotlin)

            client.delete("/bookmarks/${ktor.id}").status shouldBe HttpStatusCode.NoContent
            client.get("/bookmarks/${ktor.id}").status shouldBe HttpStatusCode.NotFound
            client.get("/bookmarks").decoded<BookmarkPage>().total shouldBe 2
        }
    }

    test("409 for a taken url on create and on update; the first bookmark is kept") {
        serviceTest { _ ->
            val first = client.postJson("/bookmarks", """{"url": "https://example.com", "title": "one"}""").decoded<Bookmark>()
            val again = client.postJson("/bookmarks", """{"url": "https://example.com", "title": "two"}""")
            again.status shouldBe HttpStatusCode.Conflict
            again.error().error shouldBe "duplicate_key"
            val other = client.postJson("/bookmarks", """{"url": "https://example.org", "title": "other"}""").decoded<Bookmark>()
            val moved = client.patchJson("/bookmarks/${other.id}", """{"url": "https://example.com"}""")
            moved.status shouldBe HttpStatusCode.Conflict
            moved.error().error shouldBe "duplicate_key"
            client.get("/bookmarks").decoded<BookmarkPage>().items shouldContainExactly listOf(other, first)
        }
    }

    test("404 for an unknown id on get, update and delete") {
        serviceTest { _ ->
            val unknown = Uuid.random()
            for (response in listOf(
                client.get("/bookmarks/$unknown"),
                client.patchJson("/bookmarks/$unknown", """{"title": "x"}"""),
                client.delete("/bookmarks/$unknown"),
            )) {
                response.status shouldBe HttpStatusCode.NotFound
                response.error() shouldBe ErrorBody("not_found", "bookmark not found")
            }
        }
    }

    test("400 for a bad id, a bad limit, a malformed or empty body") {
        serviceTest { _ ->
            suspend fun badRequest(response: HttpResponse, messagePart: String) = withClue(response.bodyAsText()) {
                response.status shouldBe HttpStatusCode.BadRequest
                response.error().error shouldBe "bad_request"
                response.error().message shouldContain messagePart
            }
            badRequest(client.get("/bookmarks/not-a-uuid"), "'not-a-uuid' is not a bookmark id")
            badRequest(client.patchJson("/bookmarks/42", """{"title": "x"}"""), "'42' is not a bookmark id")
            badRequest(client.delete("/bookmarks/42"), "'42' is not a bookmark id")
            badRequest(client.get("/bookmarks?limit=0"), "limit must be")
            badRequest(client.get("/bookmarks?limit=many"), "limit must be")
            badRequest(client.get("/bookmarks?limit=101"), "limit must be")
            badRequest(client.postJson("/bookmarks", """{"url": "https://a.example"}"""), "title")
            badRequest(client.postJson("/bookmarks", """{"url": """), "")
            badRequest(client.postJson("/bookmarks", """{"url": " ", "title": "blank"}"""), "url must not be blank")
            val id = client.postJson("/bookmarks", """{"url": "https://a.example", "title": "a"}""").decoded<Bookmark>().id
            badRequest(client.patchJson("/bookmarks/$id", "{}"), "at least one of")
            client.get("/bookmarks").decoded<BookmarkPage>().total shouldBe 1
        }
    }

    test("/health: topology, servers, pool statistics and command counters from the cluster's listener") {
        serviceTest { service ->
            client.postJson("/bookmarks", """{"url": "https://a.example", "title": "a"}""").status shouldBe HttpStatusCode.Created
            val first = client.get("/health")
            first.status shouldBe HttpStatusCode.OK
            val health = first.decoded<Health>()
            health.status shouldBe "up"
            health.topologyType shouldBe "Single"
            val port = service.cluster.settings.hosts.single().port
            health.servers.map { it.address to it.type } shouldContainExactly listOf("127.0.0.1:$port" to "Standalone")
            health.pools shouldHaveSize 1
            health.pools.single().let { pool ->
                pool.address shouldBe "127.0.0.1:$port"
                pool.state shouldBe "ready"
                pool.totalConnections.toLong() shouldBeGreaterThan 0
                pool.inUseConnections shouldBe 0
                pool.waitQueueSize shouldBe 0
            }
            health.commands.succeeded shouldBeGreaterThan 1 // createIndexes and insert at least
            health.commands.failed shouldBe 0

            shouldThrow<MongoCommandException> { service.cluster.runCommand("admin", BsonDocument("noSuchCommand", BsonString("x"))) }
            client.get("/bookmarks").status shouldBe HttpStatusCode.OK
            val after = client.get("/health").decoded<Health>().commands
            after.failed shouldBe 1
            after.succeeded shouldBeGreaterThan health.commands.succeeded
        }
    }

    test("Health.of without a reachable server: down (the route answers 503 then), server Unknown") {
        val stopped = MongoServer(MemoryBackend()).also { it.bind("127.0.0.1", 0) }
        val port = stopped.localAddress.port
        stopped.shutdownNow()
        MongoCluster(MongoClusterSettings.fromUri("mongodb://127.0.0.1:$port/?directConnection=true")).use { cluster ->
            val health = Health.of(cluster, CommandCounters())
            health.isUp shouldBe false
            health.status shouldBe "down"
            health.servers.single().type shouldBe "Unknown"
            health.commands.succeeded shouldBe 0
        }
    }

    test("command line: a URI, --port, --host, --database; bad input refused") {
        ServiceArgs.parse(emptyArray()) shouldBe ServiceArgs()
        ServiceArgs.parse(arrayOf("mongodb://db:27017/", "--port", "0", "--database", "books")) shouldBe
            ServiceArgs(uri = "mongodb://db:27017/", port = 0, database = "books")
        shouldThrow<IllegalArgumentException> { ServiceArgs.parse(arrayOf("--port", "http")) }.message shouldContain "--port"
        shouldThrow<IllegalArgumentException> { ServiceArgs.parse(arrayOf("http://x")) }.message shouldContain "connection string"
        shouldThrow<IllegalArgumentException> { ServiceArgs.parse(arrayOf("--bogus")) }.message shouldContain "unknown option"
    }
})
