package dev.mooring.cmap.internal.auth.aws

import dev.mooring.cmap.internal.auth.AuthFailure
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.future.await
import kotlinx.coroutines.withContext
import org.bson.BsonDocument
import org.bson.BsonValue
import java.net.URI
import java.net.URLEncoder
import java.net.http.HttpClient
import java.net.http.HttpRequest
import java.net.http.HttpResponse
import java.nio.charset.StandardCharsets
import java.nio.file.Files
import java.nio.file.Paths
import java.time.Instant
import java.util.UUID

/**
 * auth.md "Credential Fetching Order": a custom provider (`AWS_CREDENTIAL_PROVIDER`), the
 * environment variables (read on every call, never cached; but fresh cached credentials fetched
 * earlier win over them, as "Environment variables" requires), AssumeRoleWithWebIdentity when
 * `AWS_WEB_IDENTITY_TOKEN_FILE` and `AWS_ROLE_ARN` are set, then the ECS endpoint when
 * `AWS_CONTAINER_CREDENTIALS_RELATIVE_URI` is set, else EC2's IMDSv2. What the endpoints return is
 * kept in [cache] until five minutes before it expires. Thread-safe; fetches are not serialized.
 */
internal class AwsCredentialChain(
    private val provider: Any?,
    private val environment: (String) -> String?,
    private val endpoints: AwsEndpoints,
    private val cache: AwsCredentialCache,
    private val clock: () -> Instant,
) {
    private val http: HttpClient by lazy {
        HttpClient.newBuilder().connectTimeout(endpoints.timeout).followRedirects(HttpClient.Redirect.NEVER).build()
    }

    suspend fun credentials(): AwsCredentials {
        provider?.let { return fromProvider(it) }
        // auth.md: once credentials were fetched and cached, they win over environment variables set later
        cache.get()?.takeIf { it.isFresh(clock()) }?.let { return it }
        fromEnvironment()?.let { return it }
        val fetched = fetch()
        cache.set(fetched)
        return fetched
    }

    /** Clears the cache (auth.md: after any failed authentication). */
    fun forget() = cache.clear()

    private fun env(name: String): String? = environment(name)?.takeIf { it.isNotEmpty() }

    private fun fromEnvironment(): AwsCredentials? {
        val id = env("AWS_ACCESS_KEY_ID")
        val secret = env("AWS_SECRET_ACCESS_KEY")
        if (id == null && secret == null) return null
        if (id == null || secret == null) throw AuthFailure("AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set together")
        return AwsCredentials(id, secret, env("AWS_SESSION_TOKEN"))
    }

    private suspend fun fetch(): AwsCredentials {
        val tokenFile = env("AWS_WEB_IDENTITY_TOKEN_FILE")
        val roleArn = env("AWS_ROLE_ARN")
        if (tokenFile != null && roleArn != null) return webIdentity(tokenFile, roleArn)
        val relative = env("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI")
        return if (relative != null) ecs(relative) else ec2()
    }

    private suspend fun webIdentity(tokenFile: String, roleArn: String): AwsCredentials {
        val token = withContext(Dispatchers.IO) {
            try {
                Files.readString(Paths.get(tokenFile)).trim()
            } catch (e: Exception) {
                throw AuthFailure("cannot read AWS_WEB_IDENTITY_TOKEN_FILE: ${e.javaClass.simpleName}")
            }
        }
        val session = env("AWS_ROLE_SESSION_NAME") ?: "mooring-${UUID.randomUUID()}"
        val query = listOf(
            "Action" to "AssumeRoleWithWebIdentity",
            "RoleSessionName" to session,
            "RoleArn" to roleArn,
            "WebIdentityToken" to token,
            "Version" to "2011-06-15",
        ).joinToString("&") { (k, v) -> "$k=${URLEncoder.encode(v, StandardCharsets.UTF_8)}" }
        val body = send("AssumeRoleWithWebIdentity", HttpRequest.newBuilder(URI.create("${endpoints.sts}?$query")).header("Accept", "application/json")
            .POST(HttpRequest.BodyPublishers.noBody()))
        val creds = findCredentials(parse(body, "AssumeRoleWithWebIdentity"))
            ?: throw AuthFailure("the AssumeRoleWithWebIdentity response has no Credentials")
        return credentialsFrom(creds, "SessionToken", "AssumeRoleWithWebIdentity")
    }

    private suspend fun ecs(relative: String): AwsCredentials {
        val path = if (relative.startsWith("/")) relative else "/$relative"
        val body = send("the ECS endpoint", HttpRequest.newBuilder(URI.create(endpoints.ecs + path)).GET())
        return credentialsFrom(parse(body, "the ECS endpoint"), "Token", "the ECS endpoint")
    }

    private suspend fun ec2(): AwsCredentials {
        val base = "${endpoints.ec2}/latest"
        val token = send(
            "the EC2 token endpoint",
            HttpRequest.newBuilder(URI.create("$base/api/token")).header("X-aws-ec2-metadata-token-ttl-seconds", "30")
                .PUT(HttpRequest.BodyPublishers.noBody()),
        ).trim()
        val roles = "$base/meta-data/iam/security-credentials/"
        val role = send("the EC2 role endpoint", HttpRequest.newBuilder(URI.create(roles)).header("X-aws-ec2-metadata-token", token).GET())
            .lineSequence().map { it.trim() }.firstOrNull { it.isNotEmpty() } ?: throw AuthFailure("the EC2 instance has no IAM role")
        val body = send(
            "the EC2 credentials endpoint",
            HttpRequest.newBuilder(URI.create(roles + URLEncoder.encode(role, StandardCharsets.UTF_8))).header("X-aws-ec2-metadata-token", token).GET(),
        )
        return credentialsFrom(parse(body, "the EC2 endpoint"), "Token", "the EC2 endpoint")
    }

    private suspend fun send(what: String, builder: HttpRequest.Builder): String {
        val response = try {
            http.sendAsync(builder.timeout(endpoints.timeout).build(), HttpResponse.BodyHandlers.ofString()).await()
        } catch (e: CancellationException) {
            throw e // connectTimeoutMS around the handshake, or the caller: not an endpoint failure
        } catch (e: Exception) {
            throw AuthFailure("cannot reach $what for AWS credentials: ${e.javaClass.simpleName}")
        }
        if (response.statusCode() != 200) throw AuthFailure("$what answered HTTP ${response.statusCode()}")
        return response.body()
    }

    private fun parse(body: String, what: String): BsonDocument = try {
        BsonDocument.parse(body)
    } catch (e: RuntimeException) {
        throw AuthFailure("$what did not answer with a JSON object")
    }

    private fun findCredentials(doc: BsonDocument): BsonDocument? {
        (doc["Credentials"] as? BsonDocument)?.let { return it }
        return doc.values.asSequence().filterIsInstance<BsonDocument>().mapNotNull { findCredentials(it) }.firstOrNull()
    }

    private fun credentialsFrom(doc: BsonDocument, tokenField: String, what: String): AwsCredentials {
        fun str(name: String): String? = doc[name]?.takeIf { it.isString }?.asString()?.value?.takeIf { it.isNotEmpty() }
        val id = str("AccessKeyId")
        val secret = str("SecretAccessKey")
        if (id == null || secret == null) throw AuthFailure("$what returned no AccessKeyId / SecretAccessKey")
        return AwsCredentials(id, secret, str(tokenField), expiration(doc["Expiration"]))
    }

    private fun expiration(v: BsonValue?): Instant? = when {
        v == null -> null
        v.isString -> try {
            Instant.parse(v.asString().value)
        } catch (e: RuntimeException) {
            throw AuthFailure("the credentials' Expiration '${v.asString().value}' is not an ISO-8601 time")
        }
        v.isNumber -> Instant.ofEpochSecond(v.asNumber().longValue())
        v.isDouble -> Instant.ofEpochSecond(v.asDouble().value.toLong())
        else -> null
    }

    /**
     * AWS_CREDENTIAL_PROVIDER: an object with the AWS SDK's `resolveCredentials()` (an
     * `AwsCredentialsProvider`), whose result has `accessKeyId()`, `secretAccessKey()` and, for
     * session credentials, `sessionToken()`. Called through reflection so the SDK stays optional.
     */
    private suspend fun fromProvider(p: Any): AwsCredentials = withContext(Dispatchers.IO) {
        try {
            val resolved = p.javaClass.getMethod("resolveCredentials").also { it.isAccessible = true }.invoke(p)
                ?: throw AuthFailure("AWS_CREDENTIAL_PROVIDER returned no credentials")
            fun call(name: String): String? = try {
                resolved.javaClass.getMethod(name).also { it.isAccessible = true }.invoke(resolved) as? String
            } catch (e: NoSuchMethodException) {
                null
            }
            val id = call("accessKeyId")
            val secret = call("secretAccessKey")
            if (id.isNullOrEmpty() || secret.isNullOrEmpty()) throw AuthFailure("AWS_CREDENTIAL_PROVIDER returned no access key id / secret access key")
            AwsCredentials(id, secret, call("sessionToken"))
        } catch (e: java.lang.reflect.InvocationTargetException) {
            throw AuthFailure("AWS_CREDENTIAL_PROVIDER failed: ${e.targetException.javaClass.simpleName}")
        } catch (e: ReflectiveOperationException) {
            throw AuthFailure("AWS_CREDENTIAL_PROVIDER cannot be called: ${e.javaClass.simpleName}")
        } catch (e: RuntimeException) {
            // e.g. InaccessibleObjectException from a provider in a closed module
            throw AuthFailure("AWS_CREDENTIAL_PROVIDER cannot be called: ${e.javaClass.simpleName}")
        }
    }
}
