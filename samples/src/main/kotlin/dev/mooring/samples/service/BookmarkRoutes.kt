@file:OptIn(ExperimentalUuidApi::class)

package dev.mooring.samples.service

import io.ktor.http.HttpHeaders
import io.ktor.http.HttpStatusCode
import io.ktor.server.application.Application
import io.ktor.server.application.ApplicationCall
import io.ktor.server.application.install
import io.ktor.server.plugins.contentnegotiation.ContentNegotiation
import io.ktor.serialization.kotlinx.json.json
import io.ktor.server.request.receive
import io.ktor.server.response.header
import io.ktor.server.response.respond
import io.ktor.server.routing.Route
import io.ktor.server.routing.delete
import io.ktor.server.routing.get
import io.ktor.server.routing.patch
import io.ktor.server.routing.post
import io.ktor.server.routing.route
import io.ktor.server.routing.routing
import kotlin.uuid.ExperimentalUuidApi
import kotlin.uuid.Uuid

/**
 * The bookmark service's HTTP API on [service]:
 *
 * | request | reply |
 * |---|---|
 * | `POST /bookmarks` ([NewBookmark]) | 201 [Bookmark] with `Location`; 409 when the url is taken |
 * | `GET /bookmarks/{id}` | 200 [Bookmark]; 404; 400 for an id that is not a UUID |
 * | `GET /bookmarks?tag=T&limit=N` | 200 [BookmarkPage], newest first (limit 1..100, default 20) |
 * | `PATCH /bookmarks/{id}` ([BookmarkChanges]) | 200 [Bookmark] after the change; 404; 409 when the new url is taken |
 * | `DELETE /bookmarks/{id}` | 204; 404 |
 * | `GET /health` | 200 [Health] when a data-bearing server is known, else 503 |
 *
 * Errors are [ErrorBody] JSON (see [Failure.of]).
 */
fun Application.bookmarkModule(service: BookmarkService) {
    install(ContentNegotiation) { json(ServiceJson.json) }
    install(ServiceErrors)
    routing {
        bookmarkRoutes(service.store)
        get("/health") {
            val health = Health.of(service.cluster, service.counters)
            call.respond(if (health.isUp) HttpStatusCode.OK else HttpStatusCode.ServiceUnavailable, health)
        }
    }
}

/** The `/bookmarks` routes over [store]. */
fun Route.bookmarkRoutes(store: BookmarkStore) = route("/bookmarks") {
    post {
        val new = call.receive<NewBookmark>()
        if (new.url.isBlank()) throw InvalidRequestException("url must not be blank")
        val created = store.create(new)
        call.response.header(HttpHeaders.Location, "/bookmarks/${created.id}")
        call.respond(HttpStatusCode.Created, created)
    }
    get {
        val tag = call.request.queryParameters["tag"]
        val limit = call.request.queryParameters["limit"]?.let(::parseLimit) ?: DEFAULT_LIMIT
        call.respond(store.list(tag, limit))
    }
    get("/{id}") {
        val bookmark = store.get(call.bookmarkId()) ?: return@get call.respondFailure(Failure.notFound("bookmark"))
        call.respond(bookmark)
    }
    patch("/{id}") {
        val id = call.bookmarkId()
        val changes = call.receive<BookmarkChanges>()
        if (changes.isEmpty) throw InvalidRequestException("give at least one of url, title, tags")
        if (changes.url?.isBlank() == true) throw InvalidRequestException("url must not be blank")
        val updated = store.update(id, changes) ?: return@patch call.respondFailure(Failure.notFound("bookmark"))
        call.respond(updated)
    }
    delete("/{id}") {
        if (store.delete(call.bookmarkId())) call.respond(HttpStatusCode.NoContent) else call.respondFailure(Failure.notFound("bookmark"))
    }
}

private const val DEFAULT_LIMIT = 20
private const val MAX_LIMIT = 100

private fun parseLimit(text: String): Int =
    text.toIntOrNull()?.takeIf { it in 1..MAX_LIMIT } ?: throw InvalidRequestException("limit must be a whole number from 1 to $MAX_LIMIT, got '$text'")

/** The `{id}` path parameter as a [Uuid]; [InvalidRequestException] (400) when it is not one. */
private fun ApplicationCall.bookmarkId(): Uuid {
    val text = parameters["id"].orEmpty()
    return try {
        Uuid.parse(text)
    } catch (_: IllegalArgumentException) {
        throw InvalidRequestException("'$text' is not a bookmark id (a UUID)")
    }
}

private suspend fun ApplicationCall.respondFailure(failure: Failure) = respond(failure.status, failure.body)
