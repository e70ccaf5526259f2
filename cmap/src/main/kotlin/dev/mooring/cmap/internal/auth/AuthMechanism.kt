package dev.mooring.cmap.internal.auth

/** The mechanisms of auth.md, by their wire names. Immutable. */
internal enum class AuthMechanism(val mechanismName: String) {
    SCRAM_SHA_1("SCRAM-SHA-1"),
    SCRAM_SHA_256("SCRAM-SHA-256"),
    MONGODB_X509("MONGODB-X509"),
    PLAIN("PLAIN"),
    GSSAPI("GSSAPI"),
    MONGODB_AWS("MONGODB-AWS"),
    MONGODB_OIDC("MONGODB-OIDC"),
    ;

    companion object {
        /** The mechanism named [name] (case-insensitive), or null when auth.md has none by that name. */
        fun byName(name: String): AuthMechanism? = entries.firstOrNull { it.mechanismName.equals(name, ignoreCase = true) }
    }
}
