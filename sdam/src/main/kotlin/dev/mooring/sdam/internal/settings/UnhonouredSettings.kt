package dev.mooring.sdam.internal.settings

import dev.mooring.sdam.MongoClusterSettings

/**
 * Settings the connection string spec makes every driver parse, but that Mooring has no behaviour
 * for. They stay valid in a [MongoClusterSettings] (the uri-options suite parses them) and are
 * refused where settings become a cluster, so none is ever accepted and then silently ignored.
 * Each message names the option and says why. Stateless.
 */
internal object UnhonouredSettings {
    /** The first setting [s] asks for that Mooring cannot honour, as an error message, or null. */
    fun check(s: MongoClusterSettings): String? {
        val tls = s.connection.tls
        return when {
            s.readConcernLevel != null ->
                "readConcernLevel=${s.readConcernLevel} is not supported: Mooring sends the command documents you give it and, " +
                    "as run-command.md requires, never adds a readConcern to them; put readConcern: {level: \"${s.readConcernLevel}\"} in the command instead"
            tls.disableOcspEndpointCheck ->
                "tlsDisableOCSPEndpointCheck=true is not supported: Mooring does not check certificate revocation " +
                    "(no OCSP, stapled or from an endpoint, and no CRL), so there is no OCSP endpoint check to disable; remove the option"
            tls.disableCertificateRevocationCheck ->
                "tlsDisableCertificateRevocationCheck=true is not supported: Mooring does not check certificate revocation " +
                    "(no OCSP, no CRL), so there is nothing to disable; remove the option"
            else -> null
        }
    }
}
