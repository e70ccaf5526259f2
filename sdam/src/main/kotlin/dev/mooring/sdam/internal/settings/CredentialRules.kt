package dev.mooring.sdam.internal.settings

import dev.mooring.cmap.MongoCredential

/**
 * The per-mechanism rules of auth.md ("MongoCredential Properties") and the defaults it gives
 * for the source database. Shared by the connection string parser and the DSL so both reject
 * the same credentials. Stateless; messages never contain the password.
 */
internal object CredentialRules {
    const val SCRAM_SHA_1 = "SCRAM-SHA-1"
    const val SCRAM_SHA_256 = "SCRAM-SHA-256"
    const val PLAIN = "PLAIN"
    const val GSSAPI = "GSSAPI"
    const val X509 = "MONGODB-X509"
    const val AWS = "MONGODB-AWS"
    const val OIDC = "MONGODB-OIDC"
    const val EXTERNAL = "\$external"

    val mechanisms: List<String> = listOf(SCRAM_SHA_1, SCRAM_SHA_256, PLAIN, GSSAPI, X509, AWS, OIDC)

    /** Mechanism property names each mechanism accepts (in their canonical spelling). */
    private val properties: Map<String?, Set<String>> = mapOf(
        null to emptySet(),
        SCRAM_SHA_1 to emptySet(),
        SCRAM_SHA_256 to emptySet(),
        PLAIN to emptySet(),
        X509 to emptySet(),
        GSSAPI to setOf("SERVICE_NAME", "CANONICALIZE_HOST_NAME", "SERVICE_REALM", "SERVICE_HOST"),
        AWS to setOf("AWS_CREDENTIAL_PROVIDER"),
        OIDC to setOf("ENVIRONMENT", "TOKEN_RESOURCE", "OIDC_CALLBACK", "OIDC_HUMAN_CALLBACK", "ALLOWED_HOSTS"),
    )

    private val allPropertyNames: Set<String> =
        properties.values.flatten().toSet() + setOf("AWS_SESSION_TOKEN")

    private val oidcEnvironments = setOf("test", "azure", "gcp", "k8s")
    private val canonicalizeValues = setOf("none", "forward", "forwardAndReverse")

    /** The canonical spelling of [name] (mechanism names are case-insensitive), or null when unknown. */
    fun canonicalMechanism(name: String): String? = mechanisms.firstOrNull { it.equals(name, ignoreCase = true) }

    /** The canonical spelling of a mechanism property name (names are case-insensitive, auth.md "Naming"). */
    fun canonicalProperty(name: String): String = allPropertyNames.firstOrNull { it.equals(name, ignoreCase = true) } ?: name

    /** The source auth.md gives when none is specified: `$external`, the URI database, or `admin`. */
    fun defaultSource(mechanism: String?, database: String?): String = when (mechanism) {
        GSSAPI, X509, AWS, OIDC -> EXTERNAL
        PLAIN -> database ?: EXTERNAL
        else -> database ?: "admin"
    }

    /**
     * Builds a credential with auth.md's defaults: the source (see [defaultSource]), canonical
     * mechanism and property names, GSSAPI's default `SERVICE_NAME`, and boolean
     * `CANONICALIZE_HOST_NAME` values. Validation is [check]'s job.
     */
    fun create(
        mechanism: String?,
        username: String?,
        password: CharArray?,
        source: String?,
        database: String?,
        mechanismProperties: Map<String, Any>,
    ): MongoCredential {
        val mech = mechanism?.let { canonicalMechanism(it) ?: it }
        val props = LinkedHashMap<String, Any>()
        for ((k, v) in mechanismProperties) {
            val key = canonicalProperty(k)
            props[key] = if (key == "CANONICALIZE_HOST_NAME" && v is String && (v == "true" || v == "false")) v.toBooleanStrict() else v
        }
        if (mech == GSSAPI && "SERVICE_NAME" !in props) props["SERVICE_NAME"] = "mongodb"
        return MongoCredential(mech, username, source ?: defaultSource(mech, database), password, props)
    }

    /** Null when [c] satisfies its mechanism's rules, else a message naming the broken rule. */
    fun check(c: MongoCredential): String? {
        val mech = c.mechanism
        if (mech != null && mech !in mechanisms) {
            return "authMechanism '$mech' is not supported; use one of ${mechanisms.joinToString()}"
        }
        val name = mech ?: "the default mechanism (SCRAM)"
        if (c.source.isEmpty()) return "authSource must not be empty"
        val allowed = properties.getValue(mech)
        val unknown = c.mechanismProperties.keys.filter { it !in allowed }
        if (unknown.isNotEmpty()) {
            return if (allowed.isEmpty()) {
                "authMechanismProperties are not supported by $name (got ${unknown.joinToString()})"
            } else {
                "authMechanismProperties ${unknown.joinToString()} not supported by $mech; supported: ${allowed.joinToString()}"
            }
        }
        return when (mech) {
            null -> requireUsername(c, name)
            SCRAM_SHA_1, SCRAM_SHA_256, PLAIN -> requireUsername(c, name) ?: if (!c.hasPassword) "$mech requires a password" else null
            GSSAPI -> requireUsername(c, name) ?: requireExternal(c) ?: checkCanonicalize(c)
            X509 -> when {
                c.hasPassword -> "MONGODB-X509 does not take a password"
                c.username != null && c.username!!.isEmpty() -> "MONGODB-X509 username must not be empty when given"
                else -> requireExternal(c)
            }
            AWS -> when {
                c.username != null || c.hasPassword ->
                    "MONGODB-AWS credentials must come from the environment or an AWS credential provider, not from the URI or settings"
                else -> requireExternal(c)
            }
            OIDC -> checkOidc(c)
            else -> null
        }
    }

    private fun requireUsername(c: MongoCredential, name: String): String? =
        if (c.username.isNullOrEmpty()) "$name requires a non-empty username" else null

    private fun requireExternal(c: MongoCredential): String? =
        if (c.source != EXTERNAL) "authSource must be $EXTERNAL for ${c.mechanism}, was '${c.source}'" else null

    private fun checkCanonicalize(c: MongoCredential): String? {
        val v = c.mechanismProperties["CANONICALIZE_HOST_NAME"] ?: return null
        if (v is Boolean || (v is String && v in canonicalizeValues)) return null
        return "CANONICALIZE_HOST_NAME must be one of none, forward, forwardAndReverse, true, false; was '$v'"
    }

    private fun checkOidc(c: MongoCredential): String? {
        if (c.hasPassword) return "MONGODB-OIDC does not take a password"
        requireExternal(c)?.let { return it }
        val p = c.mechanismProperties
        val env = p["ENVIRONMENT"]?.toString()
        val callbacks = listOf("OIDC_CALLBACK", "OIDC_HUMAN_CALLBACK").count { it in p }
        for (k in listOf("OIDC_CALLBACK", "OIDC_HUMAN_CALLBACK")) {
            if (k in p && p[k] !is dev.mooring.cmap.OidcCallback) return "MONGODB-OIDC $k must be a dev.mooring.cmap.OidcCallback"
        }
        if ("ALLOWED_HOSTS" in p && "OIDC_HUMAN_CALLBACK" !in p) return "MONGODB-OIDC ALLOWED_HOSTS is only allowed with an OIDC_HUMAN_CALLBACK"
        if ("ALLOWED_HOSTS" in p && p["ALLOWED_HOSTS"] !is List<*>) return "MONGODB-OIDC ALLOWED_HOSTS must be a list of host names"
        if (callbacks > 1) return "MONGODB-OIDC accepts OIDC_CALLBACK or OIDC_HUMAN_CALLBACK, not both"
        if (env != null && callbacks > 0) return "MONGODB-OIDC accepts ENVIRONMENT or a callback, not both"
        if (env == null && callbacks == 0) return "MONGODB-OIDC requires the ENVIRONMENT mechanism property or a callback"
        if (env != null) {
            if (env !in oidcEnvironments) return "MONGODB-OIDC ENVIRONMENT must be one of ${oidcEnvironments.joinToString()}, was '$env'"
            val needsResource = env == "azure" || env == "gcp"
            if (needsResource && "TOKEN_RESOURCE" !in p) return "MONGODB-OIDC ENVIRONMENT $env requires TOKEN_RESOURCE"
            if (!needsResource && "TOKEN_RESOURCE" in p) return "MONGODB-OIDC TOKEN_RESOURCE is only allowed with ENVIRONMENT azure or gcp"
            if (c.username != null && env != "azure") return "MONGODB-OIDC ENVIRONMENT $env does not take a username"
        }
        return null
    }
}
