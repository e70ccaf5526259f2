package dev.mooring.samples.service

import dev.mooring.driver.MongoWriteException
import dev.mooring.sdam.MongoOperationTimeoutException
import dev.mooring.sdam.MongoServerSelectionTimeoutException
import io.ktor.http.HttpStatusCode
import io.ktor.server.application.createApplicationPlugin
import io.ktor.server.application.hooks.CallFailed
import io.ktor.server.application.log
import io.ktor.server.plugins.BadRequestException
import io.ktor.server.plugins.ContentTransformationException
import io.ktor.server.plugins.UnsupportedMediaTypeException
import io.ktor.server.response.respond
import kotlinx.serialization.Serializable

/** A request the service refuses with 400 Bad Request: a malformed id, a bad query parameter, an empty change. */
class InvalidRequestException(message: String) : IllegalArgumentException(message)

/** The body of every error reply: a short [error] code and a human-readable [message]. Immutable. */
@Serializable
data class ErrorBody(val error: String, val message: String)

/** What a failed call is answered with. Immutable. */
data class Failure(val status: HttpStatusCode, val body: ErrorBody) {
    companion object {
        /** MongoDB's error code for a unique index violation. */
        const val DUPLICATE_KEY: Int = 11000

        /**
         * The reply for [cause]: a duplicate key is 409, a refused request 400 (415 for a body
         * that is not JSON), no reachable server or an operation timeout 503, anything else 500.
         */
        fun of(cause: Throwable): Failure = when {
            cause is MongoWriteException && cause.code == DUPLICATE_KEY -> Failure(HttpStatusCode.Conflict, ErrorBody("duplicate_key", cause.writeError.message))
            cause is InvalidRequestException -> Failure(HttpStatusCode.BadRequest, ErrorBody("bad_request", cause.message.orEmpty()))
            cause is UnsupportedMediaTypeException -> Failure(HttpStatusCode.UnsupportedMediaType, ErrorBody("unsupported_media_type", cause.message.orEmpty()))
            cause is BadRequestException || cause is ContentTransformationException ->
                Failure(HttpStatusCode.BadRequest, ErrorBody("bad_request", generateSequence<Throwable>(cause) { it.cause }.last().message ?: "malformed request"))
            cause is MongoServerSelectionTimeoutException || cause is MongoOperationTimeoutException ->
                Failure(HttpStatusCode.ServiceUnavailable, ErrorBody("database_unavailable", cause.message.orEmpty()))
            else -> Failure(HttpStatusCode.InternalServerError, ErrorBody("internal_error", cause::class.simpleName ?: "error"))
        }

        /** An error reply for a missing resource. */
        fun notFound(what: String): Failure = Failure(HttpStatusCode.NotFound, ErrorBody("not_found", "$what not found"))
    }
}

/** Answers every call that fails with an exception with [Failure.of]'s status and body; 500s are logged. */
val ServiceErrors = createApplicationPlugin("ServiceErrors") {
    on(CallFailed) { call, cause ->
        val failure = Failure.of(cause)
        if (failure.status == HttpStatusCode.InternalServerError) call.application.log.error("${call.request.local.method.value} ${call.request.local.uri} failed", cause)
        call.respond(failure.status, failure.body)
    }
}
