package dev.mooring.cmap.internal.auth

import dev.mooring.cmap.MongoCredential
import dev.mooring.cmap.internal.auth.gssapi.GssapiClientFactory
import dev.mooring.cmap.internal.auth.gssapi.GssapiConversation
import dev.mooring.cmap.internal.auth.gssapi.HostCanonicalizer

/** GSSAPI (Kerberos, auth.md) through the JDK's SASL client or [clients]; see [GssapiConversation]. Thread-safe. */
internal class GssapiAuthenticator(
    private val credential: MongoCredential,
    clients: GssapiClientFactory,
    canonicalizer: HostCanonicalizer,
) : MechanismAuthenticator {
    /** Validates the properties at construction. */
    val conversation: GssapiConversation = GssapiConversation(credential, clients, canonicalizer)

    override val mechanismName: String get() = AuthMechanism.GSSAPI.mechanismName

    override fun begin(): AuthSession = conversation.session

    override fun toString(): String = "GssapiAuthenticator(credential=$credential)"
}
