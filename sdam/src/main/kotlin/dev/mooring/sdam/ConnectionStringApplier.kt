package dev.mooring.sdam

/**
 * Copies what a [ConnectionString] states onto a [MongoClusterSettingsBuilder]: hosts or SRV
 * name, credential, and each typed option it holds. The one place URI option names map to
 * settings, so the DSL and URIs configure the same objects. Stateless.
 */
internal object ConnectionStringApplier {
    fun apply(cs: ConnectionString, b: MongoClusterSettingsBuilder) {
        val o = cs.typedOptions
        if (cs.isSrv) {
            b.srvHost = cs.srvHost
            b.hosts = emptyList()
        } else {
            b.srvHost = null
            b.hosts = cs.hosts
        }
        cs.credential?.let { b.credential(it) }
        o.str("srvServiceName")?.let { b.srvServiceName = it }
        o.int("srvMaxHosts")?.let { b.srvMaxHosts = it }
        o.bool("directConnection")?.let { b.directConnection = it }
        o.str("replicaSet")?.let { b.replicaSet = it }
        o.bool("loadBalanced")?.let { b.loadBalanced = it }
        o.int("heartbeatFrequencyMS")?.let { b.heartbeatFrequencyMS = it.toLong() }
        o.int("localThresholdMS")?.let { b.localThresholdMS = it.toLong() }
        o.int("serverSelectionTimeoutMS")?.let { b.serverSelectionTimeoutMS = it.toLong() }
        o.str("serverMonitoringMode")?.let { b.serverMonitoringMode = ServerMonitoringMode.fromValue(it)!! }
        o.long("timeoutMS")?.let { b.timeoutMS = it }
        o.bool("retryReads")?.let { b.retryReads = it }
        o.bool("retryWrites")?.let { b.retryWrites = it }
        o.str("readConcernLevel")?.let { b.readConcernLevel = it }
        o.int("maxAdaptiveRetries")?.let { b.maxAdaptiveRetries = it }
        o.bool("enableOverloadRetargeting")?.let { b.enableOverloadRetargeting = it }
        applyReadPreference(o, b)
        applyWriteConcern(o, b)
        applyProxy(o, b)
        b.pool {
            o.int("maxPoolSize")?.let { maxPoolSize = it }
            o.int("minPoolSize")?.let { minPoolSize = it }
            o.int("maxIdleTimeMS")?.let { maxIdleTimeMS = it.toLong() }
            o.int("maxConnecting")?.let { maxConnecting = it }
            o.int("waitQueueTimeoutMS")?.let { waitQueueTimeoutMS = it.toLong() }
        }
        b.connection {
            o.int("connectTimeoutMS")?.let { connectTimeoutMS = it.toLong() }
            o.int("socketTimeoutMS")?.let { socketTimeoutMS = it.toLong() }
            o.str("appname")?.let { appName = it }
            @Suppress("UNCHECKED_CAST")
            (o["compressors"] as List<String>?)?.let { compressors = it }
            o.int("zlibCompressionLevel")?.let { zlibCompressionLevel = it }
            tls {
                val tls = o.bool("tls")
                if (tls != null) enabled = tls else if (cs.isSrv) enabled = true
                o.bool("tlsInsecure")?.let { insecure = it }
                o.bool("tlsAllowInvalidCertificates")?.let { allowInvalidCertificates = it }
                o.bool("tlsAllowInvalidHostnames")?.let { allowInvalidHostnames = it }
                o.str("tlsCAFile")?.let { caFile = it }
                o.str("tlsCertificateKeyFile")?.let { certificateKeyFile = it }
                o.str("tlsCertificateKeyFilePassword")?.let { certificateKeyFilePassword = it }
                o.bool("tlsDisableOCSPEndpointCheck")?.let { disableOcspEndpointCheck = it }
                o.bool("tlsDisableCertificateRevocationCheck")?.let { disableCertificateRevocationCheck = it }
            }
        }
    }

    private fun applyReadPreference(o: Map<String, Any>, b: MongoClusterSettingsBuilder) {
        val modeName = o.str("readPreference")
        @Suppress("UNCHECKED_CAST")
        val tags = o["readPreferenceTags"] as List<Map<String, String>>?
        val staleness = o.int("maxStalenessSeconds")
        if (modeName == null && tags == null && staleness == null) return
        val current = b.readPreference
        val mode = modeName?.let { ReadPreferenceMode.fromValue(it)!! } ?: current.mode
        val tagSets = tags ?: if (modeName != null) emptyList() else current.tagSets
        // -1 means "no maximum" (max-staleness.md); primary takes no maximum at all.
        val maxStaleness = when {
            staleness != null -> if (staleness == -1 && mode == ReadPreferenceMode.PRIMARY) null else staleness.toLong()
            modeName != null -> null
            else -> current.maxStalenessSeconds
        }
        if (mode == ReadPreferenceMode.PRIMARY && tagSets.any { it.isNotEmpty() }) {
            throw InvalidSettingsException("readPreferenceTags cannot be combined with readPreference=primary")
        }
        if (mode == ReadPreferenceMode.PRIMARY && maxStaleness != null) {
            throw InvalidSettingsException("maxStalenessSeconds cannot be combined with readPreference=primary")
        }
        b.readPreference = settingsRule { ReadPreference(mode, tagSets, maxStaleness, current.hedgeEnabled) }
    }

    private fun applyWriteConcern(o: Map<String, Any>, b: MongoClusterSettingsBuilder) {
        val w = when (val v = o["w"]) {
            is Int -> WriteAcknowledgement.Nodes(v)
            is String -> WriteAcknowledgement.Tag(v)
            else -> null
        }
        val wTimeout = o.long("wTimeoutMS")
        val journal = o.bool("journal")
        if (w == null && wTimeout == null && journal == null) return
        val c = b.writeConcern
        b.writeConcern = WriteConcern(w ?: c.w, wTimeout ?: c.wTimeoutMS, journal ?: c.journal)
    }

    private fun applyProxy(o: Map<String, Any>, b: MongoClusterSettingsBuilder) {
        val host = o.str("proxyHost")
        val port = o.int("proxyPort")
        val user = o.str("proxyUsername")
        val password = o.str("proxyPassword")
        if (host == null) {
            if (port != null || user != null || password != null) {
                throw InvalidSettingsException("proxyPort, proxyUsername and proxyPassword require proxyHost")
            }
            return
        }
        b.proxy = proxySettings(host, port ?: ProxySettings.DEFAULT_PORT, user, password)
    }

    private fun Map<String, Any>.str(k: String) = this[k] as String?
    private fun Map<String, Any>.int(k: String) = this[k] as Int?
    private fun Map<String, Any>.long(k: String) = this[k] as Long?
    private fun Map<String, Any>.bool(k: String) = this[k] as Boolean?
}
