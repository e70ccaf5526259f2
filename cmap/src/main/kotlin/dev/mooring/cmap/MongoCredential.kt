package dev.mooring.cmap

/**
 * Credentials for authentication. [toString] never shows the password, and neither does
 * anything else in Mooring (logs, events, exception messages). Immutable.
 */
public class MongoCredential(
    /** `SCRAM-SHA-256`, `SCRAM-SHA-1`, `MONGODB-X509`, `PLAIN`, `GSSAPI`, `MONGODB-AWS`, `MONGODB-OIDC`, or null to negotiate. */
    public val mechanism: String?,
    public val username: String?,
    /** The authentication database (authSource). */
    public val source: String,
    password: CharArray?,
    /** authMechanismProperties, with their values as given (booleans and strings). */
    public val mechanismProperties: Map<String, Any> = emptyMap(),
) {
    private val secret: CharArray? = password?.copyOf()

    /** A copy of the password, or null. Callers should wipe it after use. */
    public val password: CharArray? get() = secret?.copyOf()

    /** True when a password was given. */
    public val hasPassword: Boolean get() = secret != null

    override fun equals(other: Any?): Boolean =
        other is MongoCredential && other.mechanism == mechanism && other.username == username &&
            other.source == source && other.mechanismProperties == mechanismProperties &&
            (other.secret?.contentEquals(secret) ?: (secret == null))

    override fun hashCode(): Int = listOf(mechanism, username, source, mechanismProperties).hashCode()

    override fun toString(): String =
        "MongoCredential(mechanism=$mechanism, username=$username, source=$source, password=${if (secret != null) "<hidden>" else "null"}, " +
            "mechanismProperties=${mechanismProperties.keys})"
}
