package dev.mooring.spec.uri

import dev.mooring.spec.SpecCase
import dev.mooring.spec.specSuite
import dev.mooring.spec.uri.UriTestCase.bool
import dev.mooring.spec.uri.UriTestCase.present
import dev.mooring.spec.uri.UriTestCase.str
import io.kotest.core.spec.style.FunSpec
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.jsonObject

/** Runs spec-tests/connection-string: validity, warnings, hosts, auth and options of each URI. */
class ConnectionStringSpecTestsSpec : FunSpec({
    specSuite("connection-string") { _, json ->
        UriTestCase.tests(json).map { t ->
            SpecCase(t.str("description") ?: t.str("uri") ?: "?", UriTestCase.skipReason(t)) { UriTestCase.run(t) }
        }
    }
})

/** Runs spec-tests/uri-options: validity, warnings and the typed value of every listed option. */
class UriOptionsSpecTestsSpec : FunSpec({
    specSuite("uri-options") { _, json ->
        UriTestCase.tests(json).map { t ->
            SpecCase(t.str("description") ?: t.str("uri") ?: "?", UriTestCase.skipReason(t)) { UriTestCase.run(t) }
        }
    }
})

/** Runs spec-tests/auth: the credential (username, password, source, mechanism, properties) each URI yields. */
class AuthSpecTestsSpec : FunSpec({
    specSuite("auth") { _, json ->
        UriTestCase.tests(json).map { t -> SpecCase(t.str("description") ?: "?", UriTestCase.skipReason(t)) { runAuth(t) } }
    }
})

private fun runAuth(t: JsonObject) {
    val uri = t.str("uri") ?: ""
    if (t.bool("valid") == false) {
        UriTestCase.expectInvalid(uri)
        return
    }
    val cs = UriTestCase.expectValid(uri, null)
    val expected = t.present("credential")?.jsonObject
    val c = cs.credential
    if (expected == null) {
        check(c == null) { "expected no credential, got $c" }
        return
    }
    checkNotNull(c) { "expected a credential" }
    check(c.username == expected.str("username")) { "username: expected ${expected.str("username")}, got ${c.username}" }
    val password = c.password?.let { String(it) }
    check(password == expected.str("password")) { "password does not match the expected value" }
    check(c.source == expected.str("source")) { "source: expected ${expected.str("source")}, got ${c.source}" }
    check(c.mechanism == expected.str("mechanism")) { "mechanism: expected ${expected.str("mechanism")}, got ${c.mechanism}" }
    val props = expected.present("mechanism_properties")?.jsonObject
    if (props == null) {
        check(c.mechanismProperties.isEmpty()) { "expected no mechanism properties, got ${c.mechanismProperties}" }
    } else {
        check(UriTestCase.matches(props, c.mechanismProperties)) { "mechanism_properties: expected $props, got ${c.mechanismProperties}" }
    }
}

