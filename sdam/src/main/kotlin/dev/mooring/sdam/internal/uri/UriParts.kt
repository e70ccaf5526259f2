package dev.mooring.sdam.internal.uri

import dev.mooring.sdam.InvalidConnectionStringException

/**
 * A connection string split into its raw (still percent-encoded) parts, following the
 * reference steps of connection-string-spec.md: scheme, userinfo (split at the last `@`
 * before the host terminator), host list (ending at the first `/` or `?`), auth database and
 * the option string.
 */
internal class UriParts(
    val scheme: String,
    val userInfo: String?,
    val hosts: String,
    val database: String?,
    val query: String?,
) {
    val isSrv: Boolean get() = scheme == SRV_SCHEME

    companion object {
        const val SCHEME = "mongodb"
        const val SRV_SCHEME = "mongodb+srv"

        fun split(uri: String): UriParts {
            if (uri.isEmpty()) throw InvalidConnectionStringException("the connection string is empty")
            val sep = uri.indexOf("://")
            if (sep < 0) throw InvalidConnectionStringException("the connection string must start with '$SCHEME://' or '$SRV_SCHEME://'")
            val scheme = uri.substring(0, sep).lowercase()
            if (scheme != SCHEME && scheme != SRV_SCHEME) {
                throw InvalidConnectionStringException(
                    "unsupported scheme; the connection string must start with '$SCHEME://' or '$SRV_SCHEME://'",
                )
            }
            val rest = uri.substring(sep + 3)
            val slash = rest.indexOf('/')
            val question = rest.indexOf('?')
            val hostEnd = listOf(slash, question).filter { it >= 0 }.minOrNull() ?: rest.length
            val authority = rest.substring(0, hostEnd)
            var database: String? = null
            var query: String? = null
            if (hostEnd < rest.length) {
                if (rest[hostEnd] == '/') {
                    val after = rest.substring(hostEnd + 1)
                    val q = after.indexOf('?')
                    database = if (q >= 0) after.substring(0, q) else after
                    query = if (q >= 0) after.substring(q + 1) else null
                    // An '@' after the first '/' (and before the options) means the user
                    // information held an unescaped '/', or the database an unescaped '@'.
                    if (database.contains('@')) {
                        throw InvalidConnectionStringException(
                            "the user information contains an unescaped '/' (or the database an '@'); " +
                                "username, password and database must be URL encoded",
                        )
                    }
                } else {
                    query = rest.substring(hostEnd + 1)
                }
            }
            val at = authority.lastIndexOf('@')
            val userInfo = if (at >= 0) authority.substring(0, at) else null
            val hosts = if (at >= 0) authority.substring(at + 1) else authority
            if (hosts.isEmpty()) {
                val hint = if (rest.startsWith("/")) "; a Unix domain socket path must be URL encoded, e.g. %2Ftmp%2Fmongodb-27017.sock" else ""
                throw InvalidConnectionStringException("the connection string contains no host$hint")
            }
            return UriParts(scheme, userInfo, hosts, database?.ifEmpty { null }, query)
        }
    }
}
