package dev.mooring.sdam

/**
 * A SOCKS5 proxy for every connection of a cluster (URI options `proxyHost`, `proxyPort`,
 * `proxyUsername`, `proxyPassword`). [toString] never shows the password. Immutable and safe
 * to share between threads.
 *
 * The username and password must be given together, and the port must be in 1..65535.
 */
public class ProxySettings(
    /** The proxy's host name or IP literal. */
    public val host: String,
    /** The proxy's port (1080 unless given). */
    public val port: Int = DEFAULT_PORT,
    /** The SOCKS5 username, or null for no authentication. */
    public val username: String? = null,
    password: String? = null,
) {
    private val secret: String? = password

    /** The SOCKS5 password, or null. Never logged. */
    public val password: String? get() = secret

    init {
        if (host.isEmpty()) throw InvalidSettingsException("proxyHost must not be empty")
        if (port !in 1..65535) throw InvalidSettingsException("proxyPort must be in 1..65535, was $port")
        if ((username == null) != (secret == null)) {
            throw InvalidSettingsException("proxyUsername and proxyPassword must be given together")
        }
        if (username != null && username.isEmpty()) throw InvalidSettingsException("proxyUsername must not be empty")
    }

    override fun equals(other: Any?): Boolean =
        other is ProxySettings && other.host == host && other.port == port && other.username == username && other.secret == secret

    override fun hashCode(): Int = listOf(host, port, username).hashCode()

    override fun toString(): String =
        "ProxySettings(host=$host, port=$port, username=$username, password=${if (secret != null) "<hidden>" else "null"})"

    public companion object {
        /** The SOCKS5 default port. */
        public const val DEFAULT_PORT: Int = 1080
    }
}
