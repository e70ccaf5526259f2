package dev.mooring.cmap.internal.auth.aws

import java.time.Duration
import java.time.Instant

/**
 * One set of AWS credentials: an access key id, the secret access key and, for temporary
 * credentials, the session token and their expiration. Immutable; [toString] shows only the
 * access key id (auth.md: the secret is sensitive, and so is the session token).
 */
internal class AwsCredentials(
    val accessKeyId: String,
    val secretAccessKey: String,
    val sessionToken: String?,
    val expiration: Instant? = null,
) {
    init {
        require(accessKeyId.isNotEmpty() && secretAccessKey.isNotEmpty()) { "AWS credentials need an access key id and a secret access key" }
    }

    /** auth.md "Caching Credentials": valid while more than five minutes away from expiring. */
    fun isFresh(now: Instant): Boolean = expiration == null || Duration.between(now, expiration) > REFRESH_BEFORE

    override fun toString(): String =
        "AwsCredentials(accessKeyId=$accessKeyId, secretAccessKey=<hidden>, sessionToken=${if (sessionToken != null) "<hidden>" else "null"}, " +
            "expiration=$expiration)"

    companion object {
        val REFRESH_BEFORE: Duration = Duration.ofMinutes(5)
    }
}

/**
 * Where the credential sources of auth.md are reached. The defaults are AWS's addresses; tests
 * point them at loopback servers. Immutable.
 */
internal data class AwsEndpoints(
    /** The STS endpoint for AssumeRoleWithWebIdentity. */
    val sts: String = "https://sts.amazonaws.com/",
    /** The ECS agent; `AWS_CONTAINER_CREDENTIALS_RELATIVE_URI` is appended. */
    val ecs: String = "http://169.254.170.2",
    /** The EC2 instance metadata service (IMDSv2). */
    val ec2: String = "http://169.254.169.254",
    /** auth.md: a 10 second read timeout for the ECS and EC2 endpoints (and STS). */
    val timeout: Duration = Duration.ofSeconds(10),
)
