package dev.mooring.sdam.uri

import dev.mooring.cmap.ConnectionSettings
import dev.mooring.cmap.DefaultConnectionFactory
import dev.mooring.cmap.TlsSettings
import dev.mooring.sdam.InvalidSettingsException
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain

/**
 * The option audit: every option the URI parser accepts is either honoured or refused where the
 * settings become a cluster, with an [InvalidSettingsException] naming it. The URI still parses
 * (the uri-options suite expects these options to be valid).
 */
class UnhonouredOptionsSpec : FunSpec({
    val refused = listOf(
        "tls=true&tlsDisableOCSPEndpointCheck=true" to "tlsDisableOCSPEndpointCheck",
        "tls=true&tlsDisableCertificateRevocationCheck=true" to "tlsDisableCertificateRevocationCheck",
    )
    for ((options, name) in refused) {
        test("$name parses but a cluster refuses it with an InvalidSettingsException naming it") {
            val settings = MongoClusterSettings.fromUri("mongodb://127.0.0.1:1/?$options")
            val e = shouldThrow<InvalidSettingsException> { MongoCluster(settings).close() }
            e.message!! shouldContain name
            e.message!! shouldContain "not supported"
        }
    }

    test("the defaults of the refused options are accepted (a cluster opens and closes)") {
        MongoCluster(MongoClusterSettings.fromUri("mongodb://127.0.0.1:1/?tls=true&tlsDisableOCSPEndpointCheck=false")).close()
        MongoCluster(MongoClusterSettings.fromUri("mongodb://127.0.0.1:1/?tls=true&tlsDisableCertificateRevocationCheck=false")).close()
    }

    test("readConcernLevel is honoured (the driver module's reads send it), so a cluster accepts it") {
        MongoCluster(MongoClusterSettings.fromUri("mongodb://127.0.0.1:1/?readConcernLevel=majority")).close()
    }

    test("the client-backpressure options are honoured (overload retries), so a cluster accepts them") {
        MongoCluster(MongoClusterSettings.fromUri("mongodb://127.0.0.1:1/?maxAdaptiveRetries=5&enableOverloadRetargeting=true")).close()
    }

    test("a bare connection factory refuses the revocation options too") {
        for (tls in listOf(TlsSettings(enabled = true, disableOcspEndpointCheck = true), TlsSettings(enabled = true, disableCertificateRevocationCheck = true))) {
            val e = shouldThrow<IllegalArgumentException> { DefaultConnectionFactory(ConnectionSettings(tls = tls)).close() }
            e.message!! shouldContain "Mooring does not check certificate revocation"
        }
    }

    test("the settings themselves stay valid values (round trip through uriOptions)") {
        MongoClusterSettings.fromUri("mongodb://h/?readConcernLevel=local").readConcernLevel shouldBe "local"
    }
})
