package dev.mooring.cmap.internal.auth

import dev.mooring.cmap.ConnectionSettings
import dev.mooring.cmap.MongoCredential
import dev.mooring.cmap.internal.auth.aws.AwsCredentialChain
import dev.mooring.cmap.internal.auth.gssapi.HostCanonicalizer

/**
 * Chooses the [MechanismAuthenticator] for a credential: one `when` over [AuthMechanism], the
 * single place a mechanism is wired in. Validates what the mechanism needs from the rest of the
 * settings (TLS and a client certificate for X.509, TLS for PLAIN unless allowed without it) and
 * throws [IllegalArgumentException] (never naming a secret) when the credential cannot be used.
 */
internal object Authenticators {
    fun forCredential(settings: ConnectionSettings, hooks: AuthHooks = AuthHooks.DEFAULT): MechanismAuthenticator? {
        val credential = settings.credential ?: return null
        val mechanism = credential.mechanism?.let {
            requireNotNull(AuthMechanism.byName(it)) { "authentication mechanism $it is unknown (supported: ${supported()})" }
        }
        return when (mechanism) {
            null, AuthMechanism.SCRAM_SHA_1, AuthMechanism.SCRAM_SHA_256 -> {
                require(!credential.username.isNullOrEmpty()) { "SCRAM authentication needs a username" }
                require(credential.hasPassword) { "SCRAM authentication needs a password" }
                ScramAuthenticator(credential)
            }
            AuthMechanism.MONGODB_X509 -> {
                require(!credential.hasPassword) { "MONGODB-X509 does not take a password" }
                require(settings.tls.enabled) { "MONGODB-X509 authenticates with the TLS client certificate: enable TLS" }
                require(settings.tls.certificateKeyFile != null || settings.tls.sslContext != null) {
                    "MONGODB-X509 needs a client certificate: set tlsCertificateKeyFile or an sslContext with a key manager"
                }
                X509Authenticator(credential)
            }
            AuthMechanism.PLAIN -> {
                require(!credential.username.isNullOrEmpty()) { "PLAIN authentication needs a username" }
                require(credential.hasPassword) { "PLAIN authentication needs a password" }
                require(settings.tls.enabled || settings.allowPlainAuthWithoutTls) {
                    "PLAIN sends the password in clear text: enable TLS, or set allowPlainAuthWithoutTls to send it without TLS"
                }
                PlainAuthenticator(credential)
            }
            AuthMechanism.GSSAPI -> GssapiAuthenticator(credential, hooks.gssapiClients, HostCanonicalizer(hooks.hostLookups))
            AuthMechanism.MONGODB_AWS -> {
                require(credential.username == null && !credential.hasPassword && "AWS_SESSION_TOKEN" !in credential.mechanismProperties) {
                    "MONGODB-AWS credentials must come from the environment or AWS_CREDENTIAL_PROVIDER, not from the URI or settings"
                }
                val provider = credential.mechanismProperties["AWS_CREDENTIAL_PROVIDER"]
                require(provider == null || provider.javaClass.methods.any { it.name == "resolveCredentials" && it.parameterCount == 0 }) {
                    "AWS_CREDENTIAL_PROVIDER must be an AWS SDK AwsCredentialsProvider (an object with resolveCredentials())"
                }
                AwsAuthenticator(AwsCredentialChain(provider, hooks.environment, hooks.awsEndpoints, hooks.awsCache, hooks.clock), credential.source)
            }
            AuthMechanism.MONGODB_OIDC -> throw IllegalArgumentException("authentication mechanism MONGODB-OIDC is not supported yet")
        }
    }

    private fun supported(): String = AuthMechanism.entries.joinToString { it.mechanismName }
}
