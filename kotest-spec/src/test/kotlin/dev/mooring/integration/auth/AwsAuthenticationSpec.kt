package dev.mooring.integration.auth

import dev.mooring.cmap.ConnectionSettings
import dev.mooring.cmap.DefaultConnectionFactory
import dev.mooring.cmap.MongoAuthenticationException
import dev.mooring.cmap.MongoCredential
import dev.mooring.cmap.MongoNetworkException
import dev.mooring.cmap.MongoNetworkTimeoutException
import dev.mooring.cmap.internal.auth.AuthHooks
import dev.mooring.cmap.internal.auth.aws.AwsCredentialCache
import dev.mooring.cmap.internal.auth.aws.AwsCredentials
import dev.mooring.cmap.internal.auth.aws.AwsEndpoints
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.testkit.server.WireServer
import dev.mooring.testkit.server.auth.AwsAuthServer
import dev.mooring.testkit.server.auth.AwsMetadataServer
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.string.shouldStartWith
import org.bson.BsonArray
import org.bson.BsonBoolean
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString
import java.nio.file.Files
import java.time.Instant
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicInteger
import kotlin.time.Duration.Companion.seconds

/**
 * MONGODB-AWS (auth.md, auth-mongodb-aws-tests.md) on loopback: the test kit's server verifies
 * each SigV4 signature itself, and its HTTP endpoints stand in for STS (AssumeRoleWithWebIdentity),
 * the ECS agent and EC2's IMDSv2. Environment variables come from a map (the internal hook).
 */
class AwsAuthenticationSpec : FunSpec({
    timeout = 60.seconds.inWholeMilliseconds
    val secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    val token = "AQoDYXdzEJr-session-token-EXAMPLE"
    val tokenFile = Files.createTempFile("mooring-web-identity", ".jwt")

    afterSpec { Files.deleteIfExists(tokenFile) }

    class Setup(val server: WireServer, val aws: AwsAuthServer, val metadata: AwsMetadataServer, val env: MutableMap<String, String>, val cache: AwsCredentialCache)

    suspend fun <T> withAws(block: suspend (Setup) -> T): T {
        val server = WireServer.start()
        val aws = AwsAuthServer()
        aws.install(server)
        val metadata = AwsMetadataServer.start()
        aws.addIdentity(metadata.credentials.accessKeyId, metadata.credentials.secretAccessKey, metadata.credentials.sessionToken)
        try {
            return block(Setup(server, aws, metadata, ConcurrentHashMap(), AwsCredentialCache()))
        } finally {
            server.close()
            metadata.close()
        }
    }

    fun Setup.factory(provider: Any? = null): DefaultConnectionFactory {
        val props = if (provider != null) mapOf<String, Any>("AWS_CREDENTIAL_PROVIDER" to provider) else emptyMap()
        val settings = ConnectionSettings(connectTimeoutMS = 10_000, socketTimeoutMS = 10_000, credential = MongoCredential("MONGODB-AWS", null, "\$external", null, props))
        val hooks = AuthHooks(
            environment = { env[it] },
            awsEndpoints = AwsEndpoints(sts = "${metadata.baseUrl}/", ecs = metadata.baseUrl, ec2 = metadata.baseUrl),
            awsCache = cache,
        )
        return DefaultConnectionFactory(settings, emptyList(), null, hooks)
    }

    suspend fun Setup.find() = factory().use { f ->
        val c = f.create(server.address, 1, 0)
        try {
            c.establish()
            c.command("db", BsonDocument("find", BsonString("c")))["ok"] shouldBe BsonInt32(1)
        } finally {
            c.close()
        }
    }

    fun Setup.endpointHits() = listOf("sts", "ecs", "ec2-token", "ec2-role", "ec2-credentials").sumOf { metadata.hitsOf(it) }

    test("regular credentials from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY: the server verifies the signature; nothing is cached") {
        withAws { s ->
            s.aws.addIdentity("AKIAENVIRONMENT01", secret)
            s.env += mapOf("AWS_ACCESS_KEY_ID" to "AKIAENVIRONMENT01", "AWS_SECRET_ACCESS_KEY" to secret)
            s.find()
            s.aws.gate.userOf(1) shouldBe "AKIAENVIRONMENT01"
            s.endpointHits() shouldBe 0
            s.cache.get() shouldBe null
        }
    }

    test("AWS Lambda: with AWS_SESSION_TOKEN the token is sent and signed; a regional STS host signs for its region") {
        withAws { s ->
            s.aws.addIdentity("ASIALAMBDA0000001", secret, token)
            s.aws.stsHost = "sts.us-west-2.amazonaws.com"
            s.env += mapOf("AWS_ACCESS_KEY_ID" to "ASIALAMBDA0000001", "AWS_SECRET_ACCESS_KEY" to secret, "AWS_SESSION_TOKEN" to token)
            s.find()
            s.aws.gate.successfulAuthentications shouldBe 1
        }
    }

    test("AssumeRoleWithWebIdentity, with and without AWS_ROLE_SESSION_NAME; the credentials are cached") {
        withAws { s ->
            Files.writeString(tokenFile, s.metadata.webIdentityToken + "\n")
            s.env += mapOf("AWS_WEB_IDENTITY_TOKEN_FILE" to tokenFile.toString(), "AWS_ROLE_ARN" to s.metadata.roleArn, "AWS_ROLE_SESSION_NAME" to "app1")
            // ECS is configured too: web identity comes first
            s.env["AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"] = AwsMetadataServer.ECS_PATH
            s.find()
            s.find()
            s.metadata.hitsOf("sts") shouldBe 1
            s.metadata.hitsOf("ecs") shouldBe 0
            s.cache.get()!!.accessKeyId shouldBe s.metadata.credentials.accessKeyId
            s.cache.clear()
            s.env.remove("AWS_ROLE_SESSION_NAME")
            s.find()
            s.metadata.roleSessionNames.size shouldBe 2
            s.metadata.roleSessionNames[0] shouldBe "app1"
            s.metadata.roleSessionNames[1] shouldStartWith "mooring-"
        }
    }

    test("ECS: AWS_CONTAINER_CREDENTIALS_RELATIVE_URI, before EC2") {
        withAws { s ->
            s.env["AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"] = AwsMetadataServer.ECS_PATH
            s.find()
            s.metadata.hitsOf("ecs") shouldBe 1
            s.metadata.hitsOf("ec2-token") shouldBe 0
        }
    }

    test("EC2: IMDSv2 token, role name, then the role's credentials") {
        withAws { s ->
            s.find()
            s.metadata.hitsOf("ec2-token") shouldBe 1
            s.metadata.hitsOf("ec2-role") shouldBe 1
            s.metadata.hitsOf("ec2-credentials") shouldBe 1
            s.aws.gate.userOf(1) shouldBe s.metadata.credentials.accessKeyId
        }
    }

    test("cached credentials (auth-mongodb-aws-tests.md): reused, refreshed within five minutes of expiry, cleared when poisoned") {
        withAws { s ->
            s.find()
            s.metadata.hitsOf("ec2-credentials") shouldBe 1
            val cached = s.cache.get()!!
            s.find()
            s.metadata.hitsOf("ec2-credentials") shouldBe 1
            // expiring within a minute: refreshed before use
            s.cache.set(AwsCredentials(cached.accessKeyId, cached.secretAccessKey, cached.sessionToken, Instant.now().plusSeconds(60)))
            s.find()
            s.metadata.hitsOf("ec2-credentials") shouldBe 2
            s.cache.get()!!.expiration shouldBe s.metadata.credentials.expiration
            // poisoned: the authentication fails, the cache is cleared, the next attempt fetches again
            s.cache.set(AwsCredentials("AKIAPOISONED00001", "not-the-secret", null, Instant.now().plusSeconds(3600)))
            val e = shouldThrow<MongoAuthenticationException> { s.find() }
            e.serverCode shouldBe 18
            e.message!! shouldContain "MONGODB-AWS"
            s.cache.get() shouldBe null
            s.find()
            s.cache.get()!!.accessKeyId shouldBe s.metadata.credentials.accessKeyId
        }
    }

    test("a failure that is not a refusal (the connection drops mid-conversation) clears the cache too (auth.md: 'for any reason')") {
        withAws { s ->
            s.find()
            s.cache.get()!!.accessKeyId shouldBe s.metadata.credentials.accessKeyId
            s.server.configureFailPoint(
                BsonDocument("configureFailPoint", BsonString("failCommand"))
                    .append("mode", BsonDocument("times", BsonInt32(1)))
                    .append("data", BsonDocument("failCommands", BsonArray(listOf(BsonString("saslContinue")))).append("closeConnection", BsonBoolean(true))),
            )
            shouldThrow<MongoNetworkException> { s.find() }
            s.cache.get() shouldBe null
            s.find()
            s.cache.get()!!.accessKeyId shouldBe s.metadata.credentials.accessKeyId
            s.metadata.hitsOf("ec2-credentials") shouldBe 2
        }
    }

    test("environment variables: not cached, and cached credentials win over variables set later") {
        withAws { s ->
            s.find()
            (s.cache.get() != null) shouldBe true
            s.env += mapOf("AWS_ACCESS_KEY_ID" to "AKIAINVALID000001", "AWS_SECRET_ACCESS_KEY" to "invalid")
            s.find()
            s.aws.accessKeyIds.last() shouldBe s.metadata.credentials.accessKeyId
            s.cache.clear()
            shouldThrow<MongoAuthenticationException> { s.find() }.message!! shouldContain "MONGODB-AWS"
            s.cache.get() shouldBe null
        }
    }

    test("a bad server nonce or STS host is refused by the client, naming MONGODB-AWS") {
        withAws { s ->
            s.env += mapOf("AWS_ACCESS_KEY_ID" to "AKIAENVIRONMENT01", "AWS_SECRET_ACCESS_KEY" to secret)
            s.aws.serverNonce = { ByteArray(64) }
            shouldThrow<MongoAuthenticationException> { s.find() }.message!! shouldContain "client nonce"
            s.aws.serverNonce = { client -> client + ByteArray(16) }
            shouldThrow<MongoAuthenticationException> { s.find() }.message!! shouldContain "48 bytes"
            s.aws.serverNonce = { client -> client + ByteArray(32) }
            s.aws.stsHost = "sts..amazonaws.com"
            val e = shouldThrow<MongoAuthenticationException> { s.find() }
            e.message!! shouldContain "MONGODB-AWS"
            e.message!! shouldContain "empty label"
            s.aws.gate.successfulAuthentications shouldBe 0
        }
    }

    test("unreachable endpoints are a typed error") {
        withAws { s ->
            s.env["AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"] = "/no/such/path"
            shouldThrow<MongoAuthenticationException> { s.find() }.message!! shouldContain "HTTP 404"
        }
    }

    test("an endpoint that never answers is cut off by connectTimeoutMS: the connection's timeout, not 'cannot reach' the endpoint") {
        withAws { s ->
            java.net.ServerSocket(0).use { silent -> // accepts (backlog) and never answers
                s.env["AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"] = "/creds"
                val settings = ConnectionSettings(
                    connectTimeoutMS = 300, socketTimeoutMS = 10_000,
                    credential = MongoCredential("MONGODB-AWS", null, "\$external", null),
                )
                val hooks = AuthHooks(
                    environment = { s.env[it] },
                    awsEndpoints = AwsEndpoints(ecs = "http://127.0.0.1:${silent.localPort}"),
                    awsCache = s.cache,
                )
                DefaultConnectionFactory(settings, emptyList(), null, hooks).use { f ->
                    val e = shouldThrow<MongoNetworkTimeoutException> { f.create(s.server.address, 1, 0).establish() }
                    e.message!! shouldContain "300 ms"
                    f.awaitClosed()
                }
                s.cache.get() shouldBe null
            }
        }
    }

    test("credentials in the URI or settings are refused (auth.md 'Obtaining Credentials')") {
        shouldThrow<IllegalArgumentException> {
            DefaultConnectionFactory(ConnectionSettings(credential = MongoCredential("MONGODB-AWS", "AKIA", "\$external", "secret".toCharArray())))
        }.message!! shouldContain "MONGODB-AWS"
    }

    test("AWS_CREDENTIAL_PROVIDER wins over environment variables; through a cluster no event, log or error shows the secret or token") {
        withAws { s ->
            class Creds(private val id: String, private val key: String, private val tok: String) {
                fun accessKeyId() = id
                fun secretAccessKey() = key
                fun sessionToken() = tok
            }
            val calls = AtomicInteger()
            val provider = object {
                @Volatile var key = secret
                fun resolveCredentials(): Any {
                    calls.incrementAndGet()
                    return Creds("ASIAPROVIDER00001", key, token)
                }
            }
            s.aws.addIdentity("ASIAPROVIDER00001", secret, token)
            s.env += mapOf("AWS_ACCESS_KEY_ID" to "AKIAENVIRONMENT01", "AWS_SECRET_ACCESS_KEY" to "env-secret")
            s.factory(provider).use { f -> f.create(s.server.address, 1, 0).apply { establish(); close() } }
            calls.get() shouldBe 1
            s.aws.accessKeyIds.single() shouldBe "ASIAPROVIDER00001"

            val settings = MongoClusterSettings.fromUri("mongodb://${s.server.address}/?authMechanism=MONGODB-AWS&serverSelectionTimeoutMS=5000")
            val withProvider = settings.copy(
                connection = settings.connection.copy(
                    credential = MongoCredential("MONGODB-AWS", null, "\$external", null, mapOf("AWS_CREDENTIAL_PROVIDER" to provider)),
                ),
            )
            assertSecretsHidden(withProvider, listOf(secret, token)) shouldBe null
            provider.key = "wrong-secret-value"
            val failure = assertSecretsHidden(withProvider, listOf(secret, token, "wrong-secret-value"))
            (failure is MongoAuthenticationException) shouldBe true
        }
    }
})
