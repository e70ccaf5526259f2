package dev.mooring.spec.uri

import dev.mooring.sdam.ConnectionString
import dev.mooring.sdam.InvalidConnectionStringException
import dev.mooring.sdam.WriteAcknowledgement
import dev.mooring.spec.SpecCase
import dev.mooring.spec.specSuite
import dev.mooring.spec.uri.UriTestCase.bool
import dev.mooring.spec.uri.UriTestCase.present
import dev.mooring.spec.uri.UriTestCase.str
import io.kotest.core.spec.style.FunSpec
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.booleanOrNull
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.longOrNull

/**
 * Runs spec-tests/read-write-concern/connection-string: validity, warnings, and the write concern
 * (`w`, `wtimeoutMS`, `journal`) and read concern (`level`) each URI yields in the cluster settings.
 * An invalid URI is refused, or warned about with the invalid value ignored (connection-string-spec.md).
 */
class ReadWriteConcernConnectionStringSpec : FunSpec({
    specSuite("read-write-concern/connection-string") { _, json ->
        UriTestCase.tests(json).map { t -> SpecCase(t.str("description") ?: t.str("uri") ?: "?") { runConcerns(t) } }
    }
})

private fun runConcerns(t: JsonObject) {
    val uri = t.str("uri") ?: ""
    if (t.bool("valid") == false) {
        // an error, or (connection-string-spec.md "Values": "Any invalid Values for a given key MUST be ignored and MUST log a
        // WARN level message") a warning with the value ignored: the concerns stay the server's defaults
        val cs = try {
            ConnectionString.parse(uri)
        } catch (e: InvalidConnectionStringException) {
            return
        }
        check(cs.warnings.isNotEmpty()) { "expected <$uri> to be refused or warned about, parsed as ${cs.settings.writeConcern} without a warning" }
        check(cs.settings.writeConcern.isServerDefault && cs.settings.readConcernLevel == null) {
            "the invalid value of <$uri> was not ignored: ${cs.settings.writeConcern}, readConcernLevel=${cs.settings.readConcernLevel}"
        }
        return
    }
    val settings = UriTestCase.expectValid(uri, t.bool("warning")).settings
    t.present("writeConcern")?.jsonObject?.let { wc ->
        val actual = settings.writeConcern
        val w = wc["w"] as? JsonPrimitive
        val expectedW = w?.let { p -> p.longOrNull?.let { WriteAcknowledgement.Nodes(it.toInt()) } ?: WriteAcknowledgement.Tag(p.content) }
        check(actual.w == expectedW) { "w: expected $expectedW, got ${actual.w}" }
        check(actual.wTimeoutMS == (wc["wtimeoutMS"] as? JsonPrimitive)?.longOrNull) { "wtimeoutMS: expected ${wc["wtimeoutMS"]}, got ${actual.wTimeoutMS}" }
        check(actual.journal == (wc["journal"] as? JsonPrimitive)?.booleanOrNull) { "journal: expected ${wc["journal"]}, got ${actual.journal}" }
    }
    t.present("readConcern")?.jsonObject?.let { rc ->
        val level = (rc["level"] as? JsonPrimitive)?.content
        check(settings.readConcernLevel == level) { "readConcern level: expected $level, got ${settings.readConcernLevel}" }
    }
}
