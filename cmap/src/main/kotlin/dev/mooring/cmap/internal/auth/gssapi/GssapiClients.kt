package dev.mooring.cmap.internal.auth.gssapi

import java.security.PrivilegedExceptionAction
import javax.security.auth.Subject
import javax.security.auth.callback.Callback
import javax.security.auth.callback.NameCallback
import javax.security.auth.callback.PasswordCallback
import javax.security.auth.callback.UnsupportedCallbackException
import javax.security.auth.login.AppConfigurationEntry
import javax.security.auth.login.Configuration
import javax.security.auth.login.LoginContext
import javax.security.sasl.Sasl
import javax.security.sasl.SaslClient

/**
 * What the GSSAPI authenticator asks of a SASL client factory: the user principal, the optional
 * password, the service name (`SERVICE_NAME`, the SASL protocol) and the server name
 * (`SERVICE_HOST` or the canonicalized host, with `@SERVICE_REALM` appended when given), and the
 * SASL properties. Immutable; [toString] hides the password.
 */
internal class GssapiRequest(
    val username: String,
    val password: CharArray?,
    val serviceName: String,
    val serverName: String,
    val properties: Map<String, String>,
) {
    override fun toString(): String =
        "GssapiRequest(username=$username, password=${if (password != null) "<hidden>" else "null"}, serviceName=$serviceName, " +
            "serverName=$serverName, properties=$properties)"
}

/** Makes the [SaslClient] of one GSSAPI conversation. Internal so tests can script the Kerberos side; thread-safe. */
internal fun interface GssapiClientFactory {
    fun create(request: GssapiRequest): SaslClient
}

/**
 * The JDK's GSSAPI SASL client (JGSS, Kerberos). It logs in with the JAAS Krb5LoginModule (the
 * ticket cache when no password is given, else the user's password) unless the calling thread
 * already runs as a Subject with Kerberos credentials, and every step of the SaslClient runs as
 * that Subject. Stateless; thread-safe.
 */
internal object JdkGssapiClientFactory : GssapiClientFactory {
    override fun create(request: GssapiRequest): SaslClient {
        val subject = login(request)
        val client = Subject.doAs(
            subject,
            PrivilegedExceptionAction {
                Sasl.createSaslClient(arrayOf("GSSAPI"), null, request.serviceName, request.serverName, request.properties, null)
            },
        ) ?: throw IllegalStateException("the JDK has no GSSAPI SASL client")
        return SubjectSaslClient(subject, client)
    }

    private fun login(request: GssapiRequest): Subject {
        val options = if (request.password == null) {
            mapOf("useTicketCache" to "true", "doNotPrompt" to "true", "principal" to request.username)
        } else {
            mapOf("useTicketCache" to "false", "principal" to request.username)
        }
        val config = object : Configuration() {
            override fun getAppConfigurationEntry(name: String?): Array<AppConfigurationEntry> = arrayOf(
                AppConfigurationEntry(
                    "com.sun.security.auth.module.Krb5LoginModule", AppConfigurationEntry.LoginModuleControlFlag.REQUIRED, options,
                ),
            )
        }
        val handler = { callbacks: Array<Callback> ->
            for (cb in callbacks) when (cb) {
                is NameCallback -> cb.name = request.username
                is PasswordCallback -> cb.password = request.password
                else -> throw UnsupportedCallbackException(cb)
            }
        }
        val ctx = LoginContext("mooring-gssapi", Subject(), handler, config)
        ctx.login()
        return ctx.subject
    }
}

/** Runs every step of [delegate] as [subject] (JGSS reads the Kerberos tickets from it). */
private class SubjectSaslClient(private val subject: Subject, private val delegate: SaslClient) : SaslClient by delegate {
    override fun evaluateChallenge(challenge: ByteArray): ByteArray? =
        Subject.doAs(subject, PrivilegedExceptionAction { delegate.evaluateChallenge(challenge) })
}
