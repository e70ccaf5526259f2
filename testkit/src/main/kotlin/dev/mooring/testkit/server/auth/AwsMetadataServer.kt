package dev.mooring.testkit.server.auth

import com.sun.net.httpserver.HttpExchange
import com.sun.net.httpserver.HttpServer
import java.net.InetSocketAddress
import java.net.URLDecoder
import java.time.Instant
import java.util.UUID
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.Executors
import java.util.concurrent.atomic.AtomicInteger

/**
 * The AWS credential endpoints on loopback (127.0.0.1, ephemeral port): the ECS agent
 * ([ECS_PATH]), EC2's IMDSv2 (`PUT /latest/api/token`, then the role list and the role's
 * credentials under `/latest/meta-data/iam/security-credentials/`, each requiring the token) and
 * STS `AssumeRoleWithWebIdentity` (`POST /?Action=...`, answered in JSON when asked with
 * `Accept: application/json`, checking [webIdentityToken] and [roleArn]). Each serves
 * [credentials]; [hits] counts requests per endpoint. Thread-safe; [close] stops it.
 */
class AwsMetadataServer private constructor(private val http: HttpServer) : AutoCloseable {
    /** What the endpoints hand out. [toString] hides the secret and the token. */
    class Credentials(val accessKeyId: String, val secretAccessKey: String, val sessionToken: String, val expiration: Instant) {
        override fun toString(): String = "Credentials(accessKeyId=$accessKeyId, <secret hidden>, expiration=$expiration)"
    }

    /** `http://127.0.0.1:port`. */
    val baseUrl: String = "http://127.0.0.1:${http.address.port}"

    /** The credentials every endpoint returns next. */
    @Volatile var credentials: Credentials = Credentials("ASIA" + "TESTKIT00000001", "test-kit-secret/0000000000000000000000", "test-kit-token", Instant.now().plusSeconds(3600))

    /** The web identity token STS accepts. */
    @Volatile var webIdentityToken: String = "test-kit-web-identity-token"

    /** The role ARN STS accepts. */
    @Volatile var roleArn: String = "arn:aws:iam::123456789012:role/test-kit"

    /** The EC2 instance's role name. */
    @Volatile var ec2Role: String = "test-kit-role"

    /** Requests per endpoint: `ecs`, `ec2-token`, `ec2-role`, `ec2-credentials`, `sts`. */
    val hits: MutableMap<String, AtomicInteger> = ConcurrentHashMap()

    /** The RoleSessionName of each AssumeRoleWithWebIdentity request. */
    val roleSessionNames: MutableList<String> = CopyOnWriteArrayList()

    private val ec2Tokens = ConcurrentHashMap.newKeySet<String>()

    /** The number of requests [endpoint] received. */
    fun hitsOf(endpoint: String): Int = hits[endpoint]?.get() ?: 0

    private fun count(endpoint: String) = hits.computeIfAbsent(endpoint) { AtomicInteger() }.incrementAndGet()

    private fun handle(ex: HttpExchange) {
        try {
            val path = ex.requestURI.path
            val method = ex.requestMethod
            when {
                path == ECS_PATH && method == "GET" -> {
                    count("ecs")
                    respond(ex, 200, json("Token"))
                }
                path == "/latest/api/token" && method == "PUT" -> {
                    count("ec2-token")
                    val ttl = ex.requestHeaders.getFirst("X-aws-ec2-metadata-token-ttl-seconds")?.toIntOrNull()
                    if (ttl == null || ttl !in 1..21600) return respond(ex, 400, "missing or bad X-aws-ec2-metadata-token-ttl-seconds")
                    val token = UUID.randomUUID().toString()
                    ec2Tokens.add(token)
                    respond(ex, 200, token)
                }
                path.startsWith(ROLES) && method == "GET" -> {
                    val token = ex.requestHeaders.getFirst("X-aws-ec2-metadata-token")
                    if (token == null || token !in ec2Tokens) return respond(ex, 401, "Unauthorized")
                    val role = path.removePrefix(ROLES)
                    if (role.isEmpty()) {
                        count("ec2-role")
                        respond(ex, 200, ec2Role)
                    } else {
                        count("ec2-credentials")
                        if (role != ec2Role) respond(ex, 404, "no such role") else respond(ex, 200, json("Token", ec2 = true))
                    }
                }
                path == "/" && method == "POST" -> sts(ex)
                else -> respond(ex, 404, "not found")
            }
        } finally {
            ex.close()
        }
    }

    private fun sts(ex: HttpExchange) {
        count("sts")
        val query = ex.requestURI.rawQuery.orEmpty().split('&').filter { it.contains('=') }
            .associate { URLDecoder.decode(it.substringBefore('='), Charsets.UTF_8) to URLDecoder.decode(it.substringAfter('='), Charsets.UTF_8) }
        if (query["Action"] != "AssumeRoleWithWebIdentity" || query["Version"] != "2011-06-15") return respond(ex, 400, "bad action")
        if (ex.requestHeaders.getFirst("Accept") != "application/json") return respond(ex, 400, "this test kit answers JSON only")
        if (query["WebIdentityToken"] != webIdentityToken || query["RoleArn"] != roleArn) return respond(ex, 403, "AccessDenied")
        val session = query["RoleSessionName"] ?: return respond(ex, 400, "missing RoleSessionName")
        roleSessionNames.add(session)
        val c = credentials
        respond(
            ex, 200,
            """{"AssumeRoleWithWebIdentityResponse":{"AssumeRoleWithWebIdentityResult":{"Credentials":{"AccessKeyId":"${c.accessKeyId}",""" +
                """"SecretAccessKey":"${c.secretAccessKey}","SessionToken":"${c.sessionToken}","Expiration":${c.expiration.epochSecond}}}}}""",
        )
    }

    private fun json(tokenField: String, ec2: Boolean = false): String {
        val c = credentials
        val extra = if (ec2) """"Code":"Success","Type":"AWS-HMAC",""" else ""
        return """{$extra"AccessKeyId":"${c.accessKeyId}","SecretAccessKey":"${c.secretAccessKey}","$tokenField":"${c.sessionToken}",""" +
            """"Expiration":"${c.expiration}"}"""
    }

    private fun respond(ex: HttpExchange, status: Int, body: String) {
        val bytes = body.toByteArray()
        ex.sendResponseHeaders(status, bytes.size.toLong())
        ex.responseBody.use { it.write(bytes) }
    }

    /** Stops the server. Idempotent. */
    override fun close() {
        http.stop(0)
    }

    companion object {
        /** The path tests put in AWS_CONTAINER_CREDENTIALS_RELATIVE_URI. */
        const val ECS_PATH: String = "/v2/credentials/test-kit"
        private const val ROLES = "/latest/meta-data/iam/security-credentials/"

        /** Starts on 127.0.0.1 and an ephemeral port. */
        fun start(): AwsMetadataServer {
            val http = HttpServer.create(InetSocketAddress("127.0.0.1", 0), 0)
            http.executor = Executors.newCachedThreadPool { r -> Thread(r, "aws-metadata-test-kit").apply { isDaemon = true } }
            val server = AwsMetadataServer(http)
            http.createContext("/") { server.handle(it) }
            http.start()
            return server
        }
    }
}
