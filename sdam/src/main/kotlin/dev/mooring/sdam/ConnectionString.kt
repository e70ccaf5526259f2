package dev.mooring.sdam

import dev.mooring.cmap.MongoCredential
import dev.mooring.events.ServerAddress
import dev.mooring.sdam.internal.settings.CredentialRules
import dev.mooring.sdam.internal.uri.HostListParser
import dev.mooring.sdam.internal.uri.OptionDefs
import dev.mooring.sdam.internal.uri.OptionReader
import dev.mooring.sdam.internal.uri.PercentCodec
import dev.mooring.sdam.internal.uri.UriParts
import dev.mooring.sdam.internal.uri.UserInfoParser
import org.slf4j.LoggerFactory
import java.util.Collections.unmodifiableList
import java.util.Collections.unmodifiableMap

/**
 * A parsed and validated `mongodb://` or `mongodb+srv://` connection string
 * (connection-string-spec.md, uri-options.md, auth.md, initial-dns-seedlist-discovery.md,
 * load-balancers.md).
 *
 * [parse] splits the URI, percent-decodes every part (malformed escapes are errors), reads the
 * options case-insensitively, maps deprecated keys, builds the credential with auth.md's
 * defaults and checks every rule; it throws [InvalidConnectionStringException] for errors and
 * records (and logs at WARN through SLF4J) a [warnings] entry for each unknown key or invalid
 * value it ignored, as the specs require. SRV names are validated but not resolved here.
 *
 * Warnings go to the SLF4J logger `dev.mooring.connectionString`.
 *
 * Behaviour the specs ask drivers to document:
 * - **Precedence**: [MongoClusterSettingsBuilder] statements apply in order;
 *   [MongoClusterSettingsBuilder.applyConnectionString] sets the hosts, the credential (when the
 *   URI has one) and only the options the URI states, so whatever comes later wins.
 * - **Implicit TLS**: TLS is on only with `tls=true` (or `ssl=true`) or a `mongodb+srv` URI
 *   (which `tls=false` turns off); other `tls*` options never enable it by themselves.
 * - **tlsInsecure=true** relaxes certificate validation, host name verification and OCSP
 *   endpoint checking (`tlsAllowInvalidCertificates`, `tlsAllowInvalidHostnames`,
 *   `tlsDisableOCSPEndpointCheck`); it cannot be combined with any of them.
 * - **Key-value options** (`authMechanismProperties`, `readPreferenceTags`): the key ends at the
 *   first `:`, so values may contain `:`. A value containing `,` (for example a `TOKEN_RESOURCE`)
 *   must not be given in a connection string; set it in code with
 *   [MongoClusterSettingsBuilder.credential]. A `,` piece without `:` is kept as part of the
 *   previous `authMechanismProperties` value, with a warning.
 * - **Values**: booleans are `true`/`false` (any case; the legacy `1`, `yes`, … are ignored with a
 *   warning); empty numeric or boolean values are ignored with a warning; `serverSelectionTimeoutMS`
 *   must be positive; `+` is not decoded as a space (use `%20`); `;` does not separate options.
 * - **Repeats**: the last value wins with a warning, except `readPreferenceTags` (each one is a
 *   tag set, in order), the SOCKS5 options (an error) and `tls`/`ssl` (all must agree).
 * - **Hosts**: Unix domain socket paths must be percent-encoded and end in `.sock`; IPv6
 *   literals go in brackets; `mongodb+srv` takes exactly one host name and no port.
 *
 * Immutable and safe to share between threads. [toString] shows the URI with the password
 * (and the values of `tlsCertificateKeyFilePassword` and `proxyPassword`) replaced by `****`.
 */
public class ConnectionString private constructor(
    private val parts: UriParts,
    /** The hosts: the seed list, or for `mongodb+srv` the single SRV name with the default port. */
    public val hosts: List<ServerAddress>,
    /** The decoded username, or null when the URI has no user information. */
    public val username: String?,
    /** True when the user information holds a password (possibly empty). */
    public val hasPassword: Boolean,
    /** The decoded auth database (the part after the host list), or null. */
    public val database: String?,
    /** The credential with auth.md's defaults applied, or null when the URI asks for no authentication. */
    public val credential: MongoCredential?,
    /**
     * Every option as given: lower-cased key to its decoded values in order (unknown keys
     * included). Holds secret option values (`tlsCertificateKeyFilePassword`, `proxyPassword`)
     * as given: do not log it.
     */
    public val options: Map<String, List<String>>,
    /**
     * The supported options with valid values, by canonical URI name (`maxPoolSize`, `tls`,
     * `readPreferenceTags`, …), after aliases and repeats: [Int], [Long], [Boolean], [String],
     * `List<String>`, `Map<String, String>` or `List<Map<String, String>>`; `w` is an [Int] or a [String].
     */
    public val typedOptions: Map<String, Any>,
    /** What was ignored and why (unknown keys, invalid values, deprecated keys, repeats), in order. */
    public val warnings: List<String>,
    toSettings: (ConnectionString) -> MongoClusterSettings,
) {
    /** `mongodb` or `mongodb+srv`. */
    public val scheme: String get() = parts.scheme

    /** True for a `mongodb+srv` URI. */
    public val isSrv: Boolean get() = parts.isSrv

    /** For `mongodb+srv`, the host name whose SRV records give the seed list; else null. */
    public val srvHost: String? get() = if (isSrv) hosts.single().host else null

    /**
     * The cluster settings this URI describes (over the defaults). For `mongodb+srv` they hold
     * [MongoClusterSettings.srvHost] and no hosts until the SRV records are resolved.
     */
    public val settings: MongoClusterSettings = toSettings(this)

    override fun toString(): String = buildString {
        append(parts.scheme).append("://")
        if (username != null) {
            append(PercentCodec.encode(username))
            if (hasPassword) append(":****")
            append('@')
        }
        append(parts.hosts)
        if (parts.database != null || parts.query != null) append('/')
        parts.database?.let { append(it) }
        parts.query?.let { q ->
            append('?')
            append(
                q.split('&').joinToString("&") { seg ->
                    val eq = seg.indexOf('=')
                    val key = if (eq >= 0) seg.substring(0, eq) else seg
                    val decoded = try {
                        PercentCodec.decode(key, "an option key").lowercase()
                    } catch (e: InvalidConnectionStringException) {
                        null
                    }
                    val secret = decoded == null || OptionDefs.byKey[decoded]?.sensitive == true || decoded == "sslpemkeypassword"
                    if (eq >= 0 && secret) "$key=****" else seg
                },
            )
        }
    }

    public companion object {
        private val log = LoggerFactory.getLogger("dev.mooring.connectionString")
        private const val PROHIBITED_DB_CHARS = "/\\ \"$"

        /**
         * Parses and validates [uri]. Throws [InvalidConnectionStringException] (never quoting a
         * password) when it is malformed or breaks a rule; logs each warning at WARN.
         * Thread-safe and non-blocking (no DNS lookups).
         */
        @JvmStatic
        public fun parse(uri: String): ConnectionString {
            val parts = UriParts.split(uri)
            val userInfo = parts.userInfo?.let { UserInfoParser.parse(it) }
            val hosts = parseHosts(parts, echo = parts.userInfo == null && !uri.contains('@'))
            val database = parts.database?.let { PercentCodec.decode(it, "the database name") }
            if (database != null && database.any { it in PROHIBITED_DB_CHARS || it == '\u0000' }) {
                throw InvalidConnectionStringException(
                    "the database name '${database.replace("\u0000", "\\0")}' contains a prohibited character (one of / \\ space \" \$ NUL)",
                )
            }
            val opts = OptionReader.read(parts.query)
            val warnings = ArrayList(opts.warnings)
            if (!parts.isSrv) {
                for (name in listOf("srvServiceName", "srvMaxHosts")) {
                    if (name in opts.present) throw InvalidConnectionStringException("option '$name' is only allowed with a mongodb+srv URI")
                }
            }
            // socks5.md: "Drivers MUST error if this option [proxyPort] was specified and proxyHost was
            // not specified", also when the value itself is invalid (and so ignored with a warning)
            if ("proxyPort" in opts.present && opts.typed["proxyHost"] == null) {
                throw InvalidConnectionStringException("option 'proxyPort' requires proxyHost")
            }
            val credential = buildCredential(userInfo, database, opts.typed, warnings)
            for (w in warnings) log.warn("{}", w)
            return try {
                ConnectionString(
                    parts, unmodifiableList(hosts), userInfo?.username, userInfo?.password != null, database, credential,
                    unmodifiableMap(opts.raw.mapValues { unmodifiableList(it.value.toList()) }),
                    unmodifiableMap(LinkedHashMap(opts.typed)), unmodifiableList(warnings.toList()),
                ) { cs -> mongoClusterSettings { applyConnectionString(cs) } }
            } catch (e: InvalidConnectionStringException) {
                throw e
            } catch (e: InvalidSettingsException) {
                throw InvalidConnectionStringException(e.message ?: "invalid connection string", e)
            }
        }

        private fun parseHosts(parts: UriParts, echo: Boolean): List<ServerAddress> {
            if (!parts.isSrv) return HostListParser.parse(parts.hosts, echo)
            if (parts.hosts.contains(',')) throw InvalidConnectionStringException("a mongodb+srv URI must have exactly one host")
            val host = HostListParser.parse(parts.hosts, echo).single()
            if (host.isUnixSocket || host.isIpv6Literal) {
                throw InvalidConnectionStringException("a mongodb+srv URI requires a host name, not an IP literal or socket path")
            }
            if (parts.hosts.substringAfterLast(']').contains(':')) {
                throw InvalidConnectionStringException("a mongodb+srv URI must not specify a port")
            }
            return listOf(host)
        }

        private fun buildCredential(
            userInfo: dev.mooring.sdam.internal.uri.UserInfo?,
            database: String?,
            typed: Map<String, Any>,
            warnings: MutableList<String>,
        ): MongoCredential? {
            val mechanism = typed["authMechanism"] as String?
            @Suppress("UNCHECKED_CAST")
            val props = typed["authMechanismProperties"] as Map<String, String>? ?: emptyMap()
            if (userInfo == null && mechanism == null) {
                if (props.isNotEmpty()) warnings += "authMechanismProperties is ignored because no credential is configured"
                return null
            }
            if (mechanism != null && CredentialRules.canonicalMechanism(mechanism) == null) {
                throw InvalidConnectionStringException(
                    "authMechanism '$mechanism' is not supported; use one of ${CredentialRules.mechanisms.joinToString()}",
                )
            }
            for (key in props.keys) {
                val canonical = CredentialRules.canonicalProperty(key)
                if (canonical in URI_FORBIDDEN_PROPERTIES) {
                    throw InvalidConnectionStringException("authMechanismProperties '$canonical' cannot be given in a connection string")
                }
            }
            return CredentialRules.create(
                mechanism, userInfo?.username, userInfo?.password?.toCharArray(),
                typed["authSource"] as String?, database, props,
            )
        }

        /** Mechanism properties that only code can supply (callbacks, providers, the OIDC host allow-list). */
        private val URI_FORBIDDEN_PROPERTIES = setOf("ALLOWED_HOSTS", "OIDC_CALLBACK", "OIDC_HUMAN_CALLBACK", "AWS_CREDENTIAL_PROVIDER")
    }
}
