package dev.mooring.cmap.internal.auth

import com.ongres.scram.common.ScramMechanism

/** The two SCRAM mechanisms of auth.md. Immutable. */
internal enum class ScramKind(val mechanismName: String, val library: ScramMechanism) {
    SHA_1("SCRAM-SHA-1", ScramMechanism.SCRAM_SHA_1),
    SHA_256("SCRAM-SHA-256", ScramMechanism.SCRAM_SHA_256),
    ;

    companion object {
        fun byName(name: String): ScramKind? = entries.firstOrNull { it.mechanismName == name }

        /**
         * auth.md "default mechanism": SCRAM-SHA-256 when the handshake's `saslSupportedMechs`
         * lists it, else SCRAM-SHA-1 (also when the field is absent or holds unknown names).
         */
        fun negotiate(saslSupportedMechs: List<String>?): ScramKind =
            if (saslSupportedMechs != null && SHA_256.mechanismName in saslSupportedMechs) SHA_256 else SHA_1
    }
}
