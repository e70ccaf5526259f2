package dev.mooring.cmap

/**
 * A SOCKS5 proxy (RFC 1928) for every connection of a cluster (URI options `proxyHost`,
 * `proxyPort`, `proxyUsername`, `proxyPassword`, socks5.md). Every TCP connection (monitors, RTT
 * monitors, pooled connections) is opened to the proxy, which is asked to connect to the server:
 * host names are passed to the proxy unresolved, IP literals as IPv4/IPv6 addresses. With a
 * username and password the client offers both "no authentication" and username/password
 * (RFC 1929); otherwise only "no authentication". TLS runs on top of the proxied stream and
 * verifies the server's name, not the proxy's. Unix domain socket addresses never go through the
 * proxy. A failure to reach the proxy or a refusal by it is a [MongoSocks5Exception].
 *
 * Immutable and safe to share between threads. [toString] never shows the password.
 *
 * A zero-length username or password is ignored, as if it were not given (socks5.md
 * "proxyUsername", "proxyPassword": "Drivers MUST ignore this option if it specifies a
 * zero-length string"); the other one alone is then an error.
 *
 * @throws IllegalArgumentException for an empty host, a port outside 1..65535, a username without
 *   a password (or the reverse), or a username or password longer than 255 UTF-8 bytes.
 */
public class ProxySettings(
    /** The proxy's host name or IP literal. */
    public val host: String,
    /** The proxy's port (1080 unless given). */
    public val port: Int = DEFAULT_PORT,
    username: String? = null,
    password: String? = null,
) {
    /** The SOCKS5 username, or null for no authentication (also when given as a zero-length string). */
    public val username: String? = username?.takeIf { it.isNotEmpty() }

    private val secret: String? = password?.takeIf { it.isNotEmpty() }

    /** The SOCKS5 password, or null. Never logged. */
    public val password: String? get() = secret

    init {
        require(host.isNotEmpty()) { "proxyHost must not be empty" }
        require(port in 1..65535) { "proxyPort must be in 1..65535, was $port" }
        require((this.username == null) == (secret == null)) { "proxyUsername and proxyPassword must be given together (a zero-length one counts as not given)" }
        if (this.username != null) {
            require(this.username.toByteArray(Charsets.UTF_8).size <= MAX_CREDENTIAL_BYTES) { "proxyUsername must be at most $MAX_CREDENTIAL_BYTES bytes (RFC 1929)" }
        }
        if (secret != null) {
            require(secret.toByteArray(Charsets.UTF_8).size <= MAX_CREDENTIAL_BYTES) { "proxyPassword must be at most $MAX_CREDENTIAL_BYTES bytes (RFC 1929)" }
        }
    }

    /** `host:port` of the proxy (IPv6 literals in brackets), as error messages name it. */
    public val endpoint: String get() = if (':' in host && !host.startsWith("[")) "[$host]:$port" else "$host:$port"

    override fun equals(other: Any?): Boolean =
        other is ProxySettings && other.host == host && other.port == port && other.username == username && other.secret == secret

    override fun hashCode(): Int = listOf(host, port, username).hashCode()

    override fun toString(): String =
        "ProxySettings(host=$host, port=$port, username=$username, password=${if (secret != null) "<hidden>" else "null"})"

    /** Constants. */
    public companion object {
        /** The SOCKS5 default port. */
        public const val DEFAULT_PORT: Int = 1080

        /** RFC 1929 limits the username and the password to 255 bytes each. */
        public const val MAX_CREDENTIAL_BYTES: Int = 255
    }
}
