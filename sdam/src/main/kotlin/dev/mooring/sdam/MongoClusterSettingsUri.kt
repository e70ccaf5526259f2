package dev.mooring.sdam

import dev.mooring.sdam.internal.uri.PercentCodec

/**
 * The settings as URI options, by canonical URI name (`maxPoolSize`, `tls`, `w`, …), each with
 * the typed value these settings hold (defaults included; options with no value are absent):
 * [Int], [Long], [Boolean], [String], `List<String>` (`compressors`),
 * `List<Map<String, String>>` (`readPreferenceTags`) or `Map<String, Any>`
 * (`authMechanismProperties`). `tlsInsecure` appears (true) only when all three checks it
 * relaxes are relaxed. `tlsCertificateKeyFilePassword` and `proxyPassword` are included only
 * when [includeSecrets] is true; the credential's password never is (it is not an option).
 * Pure and thread-safe.
 */
public fun MongoClusterSettings.uriOptions(includeSecrets: Boolean = false): Map<String, Any> {
    val m = LinkedHashMap<String, Any>()
    val c = connection
    val tls = c.tls
    val cred = c.credential
    c.appName?.let { m["appname"] = it }
    cred?.mechanism?.let { m["authMechanism"] = it }
    if (cred != null && cred.mechanismProperties.isNotEmpty()) m["authMechanismProperties"] = cred.mechanismProperties
    cred?.let { m["authSource"] = it.source }
    m["compressors"] = c.compressors
    m["connectTimeoutMS"] = c.connectTimeoutMS
    m["directConnection"] = directConnection
    m["enableOverloadRetargeting"] = enableOverloadRetargeting
    m["heartbeatFrequencyMS"] = heartbeatFrequencyMS
    writeConcern.journal?.let { m["journal"] = it }
    m["loadBalanced"] = loadBalanced
    m["localThresholdMS"] = localThresholdMS
    m["maxAdaptiveRetries"] = maxAdaptiveRetries
    m["maxConnecting"] = pool.maxConnecting
    m["maxIdleTimeMS"] = pool.maxIdleTimeMS
    m["maxPoolSize"] = pool.maxPoolSize
    readPreference.maxStalenessSeconds?.let { m["maxStalenessSeconds"] = it }
    m["minPoolSize"] = pool.minPoolSize
    proxy?.let { p ->
        m["proxyHost"] = p.host
        m["proxyPort"] = p.port
        p.username?.let { m["proxyUsername"] = it }
        if (includeSecrets) p.password?.let { m["proxyPassword"] = it }
    }
    readConcernLevel?.let { m["readConcernLevel"] = it }
    m["readPreference"] = readPreference.mode.value
    if (readPreference.tagSets.isNotEmpty()) m["readPreferenceTags"] = readPreference.tagSets
    replicaSet?.let { m["replicaSet"] = it }
    m["retryReads"] = retryReads
    m["retryWrites"] = retryWrites
    m["serverMonitoringMode"] = serverMonitoringMode.value
    m["serverSelectionTimeoutMS"] = serverSelectionTimeoutMS
    m["socketTimeoutMS"] = c.socketTimeoutMS
    if (srvHost != null) {
        m["srvMaxHosts"] = srvMaxHosts
        m["srvServiceName"] = srvServiceName
    }
    timeoutMS?.let { m["timeoutMS"] = it }
    m["tls"] = tls.enabled
    val insecure = tls.allowInvalidCertificates && tls.allowInvalidHostnames && tls.disableOcspEndpointCheck
    if (insecure) {
        m["tlsInsecure"] = true
    } else {
        m["tlsAllowInvalidCertificates"] = tls.allowInvalidCertificates
        m["tlsAllowInvalidHostnames"] = tls.allowInvalidHostnames
        m["tlsDisableOCSPEndpointCheck"] = tls.disableOcspEndpointCheck
    }
    tls.caFile?.let { m["tlsCAFile"] = it }
    tls.certificateKeyFile?.let { m["tlsCertificateKeyFile"] = it }
    if (includeSecrets) tls.certificateKeyFilePassword?.let { m["tlsCertificateKeyFilePassword"] = it }
    if (!insecure) m["tlsDisableCertificateRevocationCheck"] = tls.disableCertificateRevocationCheck
    writeConcern.w?.let { w -> m["w"] = if (w is WriteAcknowledgement.Nodes) w.count else (w as WriteAcknowledgement.Tag).name }
    m["waitQueueTimeoutMS"] = pool.waitQueueTimeoutMS
    writeConcern.wTimeoutMS?.let { m["wTimeoutMS"] = it }
    m["zlibCompressionLevel"] = c.zlibCompressionLevel
    return m
}

/**
 * A connection string that [MongoClusterSettings.fromUri] turns back into equal settings
 * (except for fields URIs cannot express: the pool's maintenance interval, the Stable API,
 * mechanism properties that are not strings or booleans, the event loop count). Only options that differ from the
 * defaults are written. The password (and the TLS key and proxy passwords) are written only
 * when [includePasswords] is true; otherwise they and the proxy username are left out, so the
 * result is for display and may not parse back when the mechanism needs a password. `authSource`
 * is always written with a credential. Pure and thread-safe.
 */
public fun MongoClusterSettings.toConnectionString(includePasswords: Boolean = false): String {
    val sb = StringBuilder()
    val srv = srvHost != null
    sb.append(if (srv) "mongodb+srv://" else "mongodb://")
    val cred = connection.credential
    if (cred != null && (cred.username != null || cred.hasPassword)) {
        sb.append(PercentCodec.encode(cred.username ?: ""))
        if (includePasswords && cred.hasPassword) sb.append(':').append(PercentCodec.encode(String(cred.password!!)))
        sb.append('@')
    }
    if (srv) {
        sb.append(srvHost)
    } else {
        sb.append(hosts.joinToString(",") { if (it.isUnixSocket) PercentCodec.encode(it.host) else it.toString() })
    }
    val defaults = MongoClusterSettings().uriOptions()
    val pairs = ArrayList<Pair<String, String>>()
    for ((k, v) in uriOptions(includeSecrets = includePasswords)) {
        val default = when (k) {
            "tls" -> srv
            "srvMaxHosts" -> 0
            "srvServiceName" -> MongoClusterSettings.DEFAULT_SRV_SERVICE_NAME
            else -> defaults[k]
        }
        if (v == default && k != "authSource") continue
        if (k == "proxyUsername" && !includePasswords) continue
        when (v) {
            is List<*> -> if (k == "readPreferenceTags") {
                for (set in v) pairs += k to (set as Map<*, *>).entries.joinToString(",") { "${it.key}:${it.value}" }
            } else {
                pairs += k to v.joinToString(",")
            }
            is Map<*, *> -> pairs += k to v.entries.joinToString(",") { "${it.key}:${it.value}" }
            else -> pairs += k to v.toString()
        }
    }
    if (pairs.isNotEmpty()) {
        sb.append("/?")
        sb.append(pairs.joinToString("&") { (k, v) -> "$k=${PercentCodec.encode(v, keep = ":,")}" })
    }
    return sb.toString()
}
