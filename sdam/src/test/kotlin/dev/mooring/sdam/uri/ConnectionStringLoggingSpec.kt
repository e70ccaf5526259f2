package dev.mooring.sdam.uri

import dev.mooring.sdam.ConnectionString
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.string.shouldNotContain
import java.io.ByteArrayOutputStream
import java.io.PrintStream

/** Warnings reach SLF4J at WARN (slf4j-simple writes to System.err in tests) and never carry secrets. */
class ConnectionStringLoggingSpec : FunSpec({
    fun captureStdErr(block: () -> Unit): String {
        val old = System.err
        val buf = ByteArrayOutputStream()
        System.setErr(PrintStream(buf, true, Charsets.UTF_8))
        try {
            block()
        } finally {
            System.setErr(old)
        }
        return buf.toString(Charsets.UTF_8)
    }

    test("each warning is logged at WARN on dev.mooring.connectionString without secrets") {
        val log = captureStdErr {
            ConnectionString.parse(
                "mongodb://alice:s3cr3tPw@h/?fooBar=1&tlsCertificateKeyFilePassword=keyPw1&tlsCertificateKeyFilePassword=keyPw2" +
                    "&proxyHost=p&proxyUsername=u&proxyPassword=proxyPw7&maxPoolSize=-3",
            )
        }
        log shouldContain "WARN"
        log shouldContain "dev.mooring.connectionString"
        log shouldContain "Unsupported option 'fooBar'"
        log shouldContain "Repeated option 'tlsCertificateKeyFilePassword'"
        log shouldContain "\"maxPoolSize\""
        for (secret in listOf("s3cr3tPw", "keyPw1", "keyPw2", "proxyPw7")) log shouldNotContain secret
    }
})
