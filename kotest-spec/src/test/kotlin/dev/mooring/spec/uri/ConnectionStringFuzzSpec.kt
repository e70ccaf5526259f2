package dev.mooring.spec.uri

import dev.mooring.sdam.ConnectionString
import dev.mooring.sdam.InvalidConnectionStringException
import io.kotest.core.spec.style.FunSpec
import io.kotest.property.Arb
import io.kotest.property.arbitrary.arbitrary
import io.kotest.property.arbitrary.element
import io.kotest.property.arbitrary.int
import io.kotest.property.arbitrary.list
import io.kotest.property.checkAll

/** Any input, however mangled, either parses or fails with [InvalidConnectionStringException]; nothing else escapes. */
class ConnectionStringFuzzSpec : FunSpec({
    val seeds = listOf(
        "mongodb://alice:secret@a.example.com:27017,[::1]:27018,%2Ftmp%2Fm.sock/admin?replicaSet=rs&w=majority",
        "mongodb+srv://c.example.com/?srvMaxHosts=2&tls=false&authSource=x",
        "mongodb://h/?readPreference=secondary&readPreferenceTags=dc:ny,rack:1&readPreferenceTags=&maxStalenessSeconds=120",
        "mongodb://u%40R@h/?authMechanism=GSSAPI&authMechanismProperties=SERVICE_NAME:s,CANONICALIZE_HOST_NAME:true",
        "mongodb://h/?authMechanism=MONGODB-OIDC&authMechanismProperties=ENVIRONMENT:azure,TOKEN_RESOURCE:mongodb://x",
        "mongodb://h/?tls=true&tlsInsecure=false&compressors=zlib,snappy&zlibCompressionLevel=3&proxyHost=p&proxyPort=1",
    )
    val alphabet = (":/@?&=%[],.;\$#+ \"\\'!*()~-_".toList() + ('a'..'f') + ('0'..'9') + listOf('A', 'Z', 'é', '\u0000'))
    val mutated = arbitrary {
        val sb = StringBuilder(Arb.element(seeds).bind())
        repeat(Arb.int(1..6).bind()) {
            val at = Arb.int(0..sb.length).bind()
            when (Arb.int(0..2).bind()) {
                0 -> sb.insert(at, Arb.element(alphabet).bind())
                1 -> if (at < sb.length) sb.deleteCharAt(at)
                else -> if (at < sb.length) sb.setCharAt(at, Arb.element(alphabet).bind())
            }
        }
        sb.toString()
    }
    val random = arbitrary { "mongodb://" + Arb.list(Arb.element(alphabet), 0..40).bind().joinToString("") }

    test("mutated and random URIs never throw anything but InvalidConnectionStringException") {
        checkAll(3000, mutated) { uri -> parseOrTypedError(uri) }
        checkAll(2000, random) { uri -> parseOrTypedError(uri) }
    }
})

private fun parseOrTypedError(uri: String) {
    try {
        val cs = ConnectionString.parse(uri)
        cs.toString()
        cs.settings.toString()
    } catch (e: InvalidConnectionStringException) {
        check(!e.message.isNullOrEmpty()) { "empty message for <$uri>" }
    } catch (e: Throwable) {
        throw AssertionError("<$uri> threw ${e::class.qualifiedName}: ${e.message}", e)
    }
}
