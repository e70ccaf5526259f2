package dev.mooring.cmap.internal.auth.oidc

import dev.mooring.cmap.OidcCallback
import dev.mooring.cmap.OidcCredential
import dev.mooring.cmap.internal.auth.AuthFailure
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.future.await
import kotlinx.coroutines.withContext
import org.bson.json.JsonReader
import org.bson.BsonDocument
import org.bson.codecs.BsonDocumentCodec
import org.bson.codecs.DecoderContext
import java.net.URI
import java.net.URLEncoder
import java.net.http.HttpClient
import java.net.http.HttpRequest
import java.net.http.HttpResponse
import java.nio.file.Files
import java.nio.file.Path
import java.time.Duration
import kotlin.time.toJavaDuration

/**
 * The built-in machine-workflow token sources of auth.md ("Built-in OIDC Environment
 * Integrations"), each an [OidcCallback] that does no caching (the [OidcTokenCache] does):
 * `test` reads the file named by `OIDC_TOKEN_FILE`; `azure` asks the Azure Instance Metadata
 * Service, `gcp` the Google metadata server (both with `TOKEN_RESOURCE`); `k8s` reads the
 * service-account token file. A test can override the environment variables and the two
 * metadata endpoints (`AZURE_IMDS_ENDPOINT`, `GCE_METADATA_ENDPOINT`) with the system properties
 * `mooring.internal.oidc.<NAME>` (internal, not an API), to serve them on loopback. Stateless; thread-safe.
 */
internal object OidcEnvironments {
    const val AZURE_ENDPOINT = "http://169.254.169.254/metadata/identity/oauth2/token"
    const val GCP_ENDPOINT = "http://metadata/computeMetadata/v1/instance/service-accounts/default/identity"
    const val K8S_DEFAULT_TOKEN_FILE = "/var/run/secrets/kubernetes.io/serviceaccount/token"

    /** An environment variable, or its internal override for tests. */
    fun variable(name: String): String? = System.getProperty("$OVERRIDE$name") ?: System.getenv(name)

    /** A metadata endpoint: auth.md's address, replaceable only through the internal test override (never the environment). */
    private fun endpoint(name: String, default: String): String = System.getProperty("$OVERRIDE$name") ?: default

    private const val OVERRIDE = "mooring.internal.oidc."

    fun callback(environment: String, resource: String?, username: String?): OidcCallback = when (environment) {
        "test" -> OidcCallback { _ ->
            val file = variable("OIDC_TOKEN_FILE") ?: throw AuthFailure("ENVIRONMENT test needs the OIDC_TOKEN_FILE environment variable")
            OidcCredential(readToken(file))
        }
        "k8s" -> OidcCallback { _ ->
            val file = variable("AZURE_FEDERATED_TOKEN_FILE") ?: variable("AWS_WEB_IDENTITY_TOKEN_FILE") ?: K8S_DEFAULT_TOKEN_FILE
            OidcCredential(readToken(file))
        }
        "azure" -> OidcCallback { ctx ->
            val query = "api-version=2018-02-01&resource=${encode(resource!!)}" + (username?.let { "&client_id=${encode(it)}" } ?: "")
            val body = get("${endpoint("AZURE_IMDS_ENDPOINT", AZURE_ENDPOINT)}?$query", ctx.timeout, "Accept" to "application/json", "Metadata" to "true")
            val doc = try {
                BsonDocumentCodec().decode(JsonReader(body), DecoderContext.builder().build())
            } catch (e: Exception) {
                throw AuthFailure("the Azure metadata service answered with a body that is not JSON", e)
            }
            val token = doc["access_token"]?.takeIf { it.isString }?.asString()?.value
                ?: throw AuthFailure("the Azure metadata service's answer has no access_token")
            OidcCredential(token, expiresIn(doc))
        }
        "gcp" -> OidcCallback { ctx ->
            OidcCredential(get("${endpoint("GCE_METADATA_ENDPOINT", GCP_ENDPOINT)}?audience=${encode(resource!!)}", ctx.timeout, "Metadata-Flavor" to "Google"))
        }
        else -> throw IllegalArgumentException("unknown MONGODB-OIDC ENVIRONMENT '$environment'")
    }

    private fun expiresIn(doc: BsonDocument): kotlin.time.Duration? =
        doc["expires_in"]?.let { v -> (if (v.isString) v.asString().value.toLongOrNull() else if (v.isNumber) v.asNumber().longValue() else null) }
            ?.takeIf { it >= 0 }?.let { kotlin.time.Duration.parse("${it}s") }

    private suspend fun readToken(file: String): String = withContext(Dispatchers.IO) {
        try {
            Files.readString(Path.of(file)).trim()
        } catch (e: java.io.IOException) {
            throw AuthFailure("cannot read the token file $file: ${e.javaClass.simpleName}", e)
        }
    }

    private fun encode(s: String) = URLEncoder.encode(s, Charsets.UTF_8)

    private suspend fun get(url: String, timeout: kotlin.time.Duration, vararg headers: Pair<String, String>): String {
        val request = HttpRequest.newBuilder(URI.create(url)).GET().timeout(timeout.toJavaDuration())
        headers.forEach { (k, v) -> request.header(k, v) }
        val client = HttpClient.newBuilder().connectTimeout(Duration.ofMillis(timeout.inWholeMilliseconds)).build()
        val response = try {
            client.sendAsync(request.build(), HttpResponse.BodyHandlers.ofString()).await()
        } catch (e: java.io.IOException) {
            throw AuthFailure("GET ${url.substringBefore('?')} failed: ${e.message ?: e.javaClass.simpleName}", e)
        }
        if (response.statusCode() != 200) {
            throw AuthFailure("GET ${url.substringBefore('?')} answered ${response.statusCode()}: ${response.body().take(MAX_BODY_IN_MESSAGE)}")
        }
        return response.body().trim()
    }

    private const val MAX_BODY_IN_MESSAGE = 1000
}
