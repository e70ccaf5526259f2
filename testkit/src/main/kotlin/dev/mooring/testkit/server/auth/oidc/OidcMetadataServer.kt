package dev.mooring.testkit.server.auth.oidc

import com.sun.net.httpserver.HttpServer
import java.net.InetAddress
import java.net.InetSocketAddress
import java.net.URLDecoder
import java.util.concurrent.CopyOnWriteArrayList

/**
 * The Azure Instance Metadata Service and Google metadata server endpoints MONGODB-OIDC's
 * `azure` and `gcp` environments call, on 127.0.0.1 (JDK HTTP server). Each GET is recorded
 * (path, query parameters, headers); the answer comes from [azureToken] / [gcpToken] (user from
 * `client_id` or the audience), or [failWith] status and body when set. Thread-safe; [close] stops it.
 */
class OidcMetadataServer(private val idp: OidcIdentityProvider) : AutoCloseable {
    /** One recorded request. */
    data class Request(val path: String, val query: Map<String, String>, val headers: Map<String, String>)

    private val server = HttpServer.create(InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16)
    private val recorded = CopyOnWriteArrayList<Request>()

    /** When set, every request is answered with this status and body. */
    @Volatile var failWith: Pair<Int, String>? = null

    /** The user Azure tokens are issued to when no client_id is given. */
    @Volatile var azureDefaultUser: String = "azure-identity"

    /** Requests received so far. */
    val requests: List<Request> get() = recorded.toList()

    /** `http://127.0.0.1:port/metadata/identity/oauth2/token`. */
    val azureEndpoint: String get() = "http://127.0.0.1:${server.address.port}/metadata/identity/oauth2/token"

    /** `http://127.0.0.1:port/computeMetadata/v1/instance/service-accounts/default/identity`. */
    val gcpEndpoint: String get() = "http://127.0.0.1:${server.address.port}/computeMetadata/v1/instance/service-accounts/default/identity"

    init {
        server.createContext("/") { ex ->
            val query = ex.requestURI.rawQuery.orEmpty().split('&').filter { it.contains('=') }
                .associate { URLDecoder.decode(it.substringBefore('='), Charsets.UTF_8) to URLDecoder.decode(it.substringAfter('='), Charsets.UTF_8) }
            val headers = ex.requestHeaders.entries.associate { it.key.lowercase() to it.value.joinToString(",") }
            recorded += Request(ex.requestURI.path, query, headers)
            val (status, body) = failWith ?: when {
                ex.requestURI.path.startsWith("/metadata/identity") && headers["metadata"] == "true" -> {
                    val user = query["client_id"] ?: azureDefaultUser
                    if (user == "bad") 400 to """{"error":"invalid_request","error_description":"Identity not found"}"""
                    else 200 to """{"access_token":"${idp.issue(user)}","expires_in":"3599","token_type":"Bearer","resource":"${query["resource"]}"}"""
                }
                ex.requestURI.path.startsWith("/computeMetadata") && headers["metadata-flavor"] == "Google" ->
                    200 to idp.issue("gcp:${query["audience"]}")
                else -> 400 to "missing metadata header"
            }
            val bytes = body.toByteArray()
            ex.sendResponseHeaders(status, bytes.size.toLong())
            ex.responseBody.use { it.write(bytes) }
        }
        server.start()
    }

    override fun close() = server.stop(0)
}
