package dev.mooring.sdam.internal.uri

import dev.mooring.sdam.InvalidConnectionStringException

/** A decoded username and optional password. [toString] hides the password. */
internal class UserInfo(val username: String, val password: String?) {
    override fun toString(): String = "UserInfo(username=$username, password=${if (password != null) "<hidden>" else "null"})"
}

/**
 * Validates and decodes the userinfo part (connection-string-spec.md "Userinfo"): no `@`, at
 * most one `:`, only RFC 3986 userinfo characters (non-ASCII characters are tolerated), and
 * well-formed percent escapes. Errors never quote the text, which may hold the password.
 */
internal object UserInfoParser {
    private const val ALLOWED = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:%"
    private const val MUST_ENCODE = "username and password must be URL encoded"

    fun parse(raw: String): UserInfo {
        if (raw.contains('@')) throw InvalidConnectionStringException("the user information contains an unescaped '@'; $MUST_ENCODE")
        if (raw.count { it == ':' } > 1) throw InvalidConnectionStringException("the user information contains more than one ':'; $MUST_ENCODE")
        for (ch in raw) {
            if (ch.code < 0x80 && ALLOWED.indexOf(ch) < 0) {
                throw InvalidConnectionStringException("the user information contains a character that must be percent-encoded; $MUST_ENCODE")
            }
        }
        val colon = raw.indexOf(':')
        val user = if (colon >= 0) raw.substring(0, colon) else raw
        val pass = if (colon >= 0) raw.substring(colon + 1) else null
        val username = PercentCodec.decode(user, "the username ($MUST_ENCODE)", showText = false)
        val password = pass?.let { PercentCodec.decode(it, "the password ($MUST_ENCODE)", showText = false) }
        return UserInfo(username, password)
    }
}
