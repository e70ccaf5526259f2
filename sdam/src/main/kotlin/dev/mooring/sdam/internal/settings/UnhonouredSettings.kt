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
        // readConcernLevel is honoured: the driver module's collections and databases send it (runCommand, as run-command.md
        // requires, adds nothing to the command given)
        return ConnectionSettingsRules.unhonoured(s.connection) // the TLS revocation options: cmap's rule, its one home
    }
}
