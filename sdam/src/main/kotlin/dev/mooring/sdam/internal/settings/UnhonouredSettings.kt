package dev.mooring.sdam.internal.settings

import dev.mooring.cmap.internal.connection.ConnectionSettingsRules
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
        return when {
            s.readConcernLevel != null ->
                "readConcernLevel=${s.readConcernLevel} is not supported: Mooring sends the command documents you give it and, " +
                    "as run-command.md requires, never adds a readConcern to them; put readConcern: {level: \"${s.readConcernLevel}\"} in the command instead"
            else -> ConnectionSettingsRules.unhonoured(s.connection) // the TLS revocation options: cmap's rule, its one home
        }
    }
}
