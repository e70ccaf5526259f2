package dev.mooring.sdam.internal.uri

import dev.mooring.sdam.MongoClusterSettings.Companion.MIN_HEARTBEAT_FREQUENCY_MS
import dev.mooring.sdam.ReadPreferenceMode
import dev.mooring.sdam.ServerMonitoringMode
import dev.mooring.cmap.internal.connection.ConnectionSettingsRules
import dev.mooring.sdam.internal.settings.SettingsRules

/** The value types of URI options (connection-string-spec.md "Values", uri-options.md). */
internal enum class OptionType { STRING, INT, LONG, BOOLEAN, STRING_LIST, KEY_VALUES, TAG_SETS, WRITE_W, READ_PREFERENCE, MONITORING_MODE }

/**
 * One supported URI option: its canonical (camelCase) name, type, the accepted range as a
 * predicate with a description for warnings, and whether its value is secret (never echoed).
 */
internal class OptionDef(
    val name: String,
    val type: OptionType,
    val accepted: String = "",
    val sensitive: Boolean = false,
    val valid: (Any) -> Boolean = { true },
)

/** The options Mooring understands, keyed by lower-cased name, plus aliases. */
internal object OptionDefs {
    private fun intAtLeast(min: Int): (Any) -> Boolean = { (it as Int) >= min }
    private fun longAtLeast(min: Long): (Any) -> Boolean = { (it as Long) >= min }

    private val list: List<OptionDef> = listOf(
        OptionDef("appname", OptionType.STRING, "at most 128 bytes of UTF-8") {
            (it as String).toByteArray(Charsets.UTF_8).size <= ConnectionSettingsRules.MAX_APP_NAME_BYTES
        },
        OptionDef("authMechanism", OptionType.STRING),
        OptionDef("authMechanismProperties", OptionType.KEY_VALUES, "comma-separated key:value pairs"),
        OptionDef("authSource", OptionType.STRING),
        OptionDef("compressors", OptionType.STRING_LIST, "a comma-separated list of snappy, zlib, zstd"),
        OptionDef("connectTimeoutMS", OptionType.INT, "a non-negative integer", valid = intAtLeast(0)),
        OptionDef("directConnection", OptionType.BOOLEAN, "true or false"),
        OptionDef("enableOverloadRetargeting", OptionType.BOOLEAN, "true or false"),
        OptionDef("heartbeatFrequencyMS", OptionType.INT, "an integer >= $MIN_HEARTBEAT_FREQUENCY_MS", valid = intAtLeast(MIN_HEARTBEAT_FREQUENCY_MS.toInt())),
        OptionDef("journal", OptionType.BOOLEAN, "true or false"),
        OptionDef("loadBalanced", OptionType.BOOLEAN, "true or false"),
        OptionDef("localThresholdMS", OptionType.INT, "a non-negative integer", valid = intAtLeast(0)),
        OptionDef("maxAdaptiveRetries", OptionType.INT, "a non-negative integer", valid = intAtLeast(0)),
        OptionDef("maxConnecting", OptionType.INT, "a positive integer", valid = intAtLeast(1)),
        OptionDef("maxIdleTimeMS", OptionType.INT, "a non-negative integer", valid = intAtLeast(0)),
        OptionDef("maxPoolSize", OptionType.INT, "a non-negative integer", valid = intAtLeast(0)),
        OptionDef("maxStalenessSeconds", OptionType.INT, "-1 or a positive integer") { it == -1 || (it as Int) > 0 },
        OptionDef("minPoolSize", OptionType.INT, "a non-negative integer", valid = intAtLeast(0)),
        OptionDef("proxyHost", OptionType.STRING, "a non-empty host") { (it as String).isNotEmpty() },
        OptionDef("proxyPort", OptionType.INT, "an integer in 1..65535") { it as Int in 1..65535 },
        OptionDef("proxyUsername", OptionType.STRING, "a non-empty string") { (it as String).isNotEmpty() },
        OptionDef("proxyPassword", OptionType.STRING, "a non-empty string", sensitive = true) { (it as String).isNotEmpty() },
        OptionDef("readConcernLevel", OptionType.STRING, "a non-empty string") { (it as String).isNotEmpty() },
        OptionDef("readPreference", OptionType.READ_PREFERENCE, ReadPreferenceMode.entries.joinToString { it.value }),
        OptionDef("readPreferenceTags", OptionType.TAG_SETS, "comma-separated key:value pairs"),
        OptionDef("replicaSet", OptionType.STRING, "a non-empty string") { (it as String).isNotEmpty() },
        OptionDef("retryReads", OptionType.BOOLEAN, "true or false"),
        OptionDef("retryWrites", OptionType.BOOLEAN, "true or false"),
        OptionDef("serverMonitoringMode", OptionType.MONITORING_MODE, ServerMonitoringMode.entries.joinToString { it.value }),
        OptionDef("serverSelectionTimeoutMS", OptionType.INT, "a positive integer", valid = intAtLeast(1)),
        OptionDef("socketTimeoutMS", OptionType.INT, "a non-negative integer", valid = intAtLeast(0)),
        OptionDef("srvMaxHosts", OptionType.INT, "a non-negative integer", valid = intAtLeast(0)),
        OptionDef("srvServiceName", OptionType.STRING, "a valid SRV service name (RFC 6335)") {
            SettingsRules.isValidSrvServiceName(it as String)
        },
        OptionDef("timeoutMS", OptionType.LONG, "a non-negative integer", valid = longAtLeast(0)),
        OptionDef("tls", OptionType.BOOLEAN, "true or false"),
        OptionDef("tlsAllowInvalidCertificates", OptionType.BOOLEAN, "true or false"),
        OptionDef("tlsAllowInvalidHostnames", OptionType.BOOLEAN, "true or false"),
        OptionDef("tlsCAFile", OptionType.STRING, "a file path") { (it as String).isNotEmpty() },
        OptionDef("tlsCertificateKeyFile", OptionType.STRING, "a file path") { (it as String).isNotEmpty() },
        OptionDef("tlsCertificateKeyFilePassword", OptionType.STRING, sensitive = true),
        OptionDef("tlsDisableCertificateRevocationCheck", OptionType.BOOLEAN, "true or false"),
        OptionDef("tlsDisableOCSPEndpointCheck", OptionType.BOOLEAN, "true or false"),
        OptionDef("tlsInsecure", OptionType.BOOLEAN, "true or false"),
        OptionDef("w", OptionType.WRITE_W, "a non-negative integer or a string"),
        OptionDef("waitQueueTimeoutMS", OptionType.INT, "a non-negative integer", valid = intAtLeast(0)),
        OptionDef("wTimeoutMS", OptionType.LONG, "a non-negative integer", valid = longAtLeast(0)),
        OptionDef("zlibCompressionLevel", OptionType.INT, "an integer in -1..9") { it as Int in -1..9 },
    )

    /** Supported options by lower-cased name. */
    val byKey: Map<String, OptionDef> = list.associateBy { it.name.lowercase() }

    /** The definition of the canonical option [name]. */
    fun of(name: String): OptionDef = byKey.getValue(name.lowercase())

    /** `ssl` is a full synonym of `tls` (uri-options.md lists it); no deprecation warning. */
    const val SSL = "ssl"

    /** Deprecated aliases: lower-cased old key to the canonical replacement. */
    val deprecated: Map<String, String> = mapOf(
        "j" to "journal",
        "wtimeout" to "wTimeoutMS",
        "sslinvalidhostnameallowed" to "tlsAllowInvalidHostnames",
        "sslallowinvalidcertificates" to "tlsAllowInvalidCertificates",
        "sslcafile" to "tlsCAFile",
        "sslpemkeyfile" to "tlsCertificateKeyFile",
        "sslpemkeypassword" to "tlsCertificateKeyFilePassword",
    )

    /** Deprecated keys handled specially: `slaveOk` (secondaryPreferred) and `gssapiServiceName` (SERVICE_NAME). */
    const val SLAVE_OK = "slaveok"
    const val GSSAPI_SERVICE_NAME = "gssapiservicename"

    /** Options a multi-threaded driver ignores (uri-options.md: required for single-threaded drivers only). */
    val singleThreadedOnly: Set<String> = setOf("serverselectiontryonce", "socketcheckintervalms")

    /** The four SOCKS5 options, which may not be repeated. */
    val proxyOptions: Set<String> = setOf("proxyhost", "proxyport", "proxyusername", "proxypassword")

    /** Pairs of TLS options that must not appear together (uri-options.md "Conflicting TLS options"). */
    val tlsConflicts: List<Pair<String, String>> = listOf(
        "tlsInsecure" to "tlsAllowInvalidCertificates",
        "tlsInsecure" to "tlsAllowInvalidHostnames",
        "tlsInsecure" to "tlsDisableOCSPEndpointCheck",
        "tlsInsecure" to "tlsDisableCertificateRevocationCheck",
        "tlsAllowInvalidCertificates" to "tlsDisableOCSPEndpointCheck",
        "tlsAllowInvalidCertificates" to "tlsDisableCertificateRevocationCheck",
        "tlsDisableOCSPEndpointCheck" to "tlsDisableCertificateRevocationCheck",
    )
}
