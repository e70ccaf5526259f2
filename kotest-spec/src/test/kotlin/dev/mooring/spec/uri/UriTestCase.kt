package dev.mooring.spec.uri

import dev.mooring.events.ServerAddress
import dev.mooring.sdam.ConnectionString
import dev.mooring.sdam.InvalidConnectionStringException
import dev.mooring.sdam.uriOptions
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonNull
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.booleanOrNull
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import kotlinx.serialization.json.longOrNull

/** Helpers shared by the `connection-string`, `uri-options` and `auth` runners. */
internal object UriTestCase {
    /** The test cases of a file: its `tests` array. */
    fun tests(json: JsonElement): List<JsonObject> = json.jsonObject.getValue("tests").jsonArray.map { it.jsonObject }

    fun JsonObject.str(key: String): String? = (this[key] as? JsonPrimitive)?.takeIf { it !is JsonNull }?.content

    fun JsonObject.bool(key: String): Boolean? = (this[key] as? JsonPrimitive)?.booleanOrNull

    fun JsonObject.present(key: String): JsonElement? = this[key]?.takeIf { it !is JsonNull }

    /**
     * Why a case is skipped, or null. Two kinds, both decided from what the case asserts:
     * - it asserts the value of (or no warning for) an option uri-options.md requires only of
     *   single-threaded drivers (`serverSelectionTryOnce`, `socketCheckIntervalMS`);
     * - it expects MONGODB-AWS credentials in the URI to be accepted, which auth.md (changelog
     *   2025-09-30, "Obtaining Credentials") now forbids; the current spec text wins, and the
     *   auth corpus itself asserts the error for the same inputs.
     */
    fun skipReason(t: JsonObject): String? {
        val uri = t.str("uri") ?: return null
        val options = t.present("options") as? JsonObject
        for (key in listOf("serverSelectionTryOnce", "socketCheckIntervalMS")) {
            if (!uri.contains("$key=", ignoreCase = true)) continue
            if (t.bool("warning") == false || options?.keys?.any { it.equals(key, ignoreCase = true) } == true) {
                return "asserts $key, which uri-options.md requires only of single-threaded drivers; Mooring is a " +
                    "multi-threaded (coroutine) driver and ignores it with a warning"
            }
        }
        if (t.bool("valid") == true && uri.contains("authMechanism=MONGODB-AWS", ignoreCase = true)) {
            val userInfo = uri.substringAfter("://").substringBefore('/').substringBefore('?').contains('@')
            if (userInfo || uri.contains("AWS_SESSION_TOKEN", ignoreCase = true)) {
                return "the case expects MONGODB-AWS credentials in the URI to be accepted (\"${t.str("description")}\", valid: true), " +
                    "but auth.md 'Obtaining Credentials' says: \"If credentials are provided in the URI or client options, the " +
                    "driver MUST raise an error.\" (changelog 2025-09-30: \"Remove support for explicitly specifying MONGODDB-AWS " +
                    "authentication properties\"); the same corpus asserts that error for the same inputs (\"should throw an " +
                    "exception if username and password provided (MONGODB-AWS)\" and \"should throw an exception if " +
                    "AWS_SESSION_TOKEN provided (MONGODB-AWS)\", valid: false), so Mooring follows the spec text"
            }
        }
        return null
    }

    /** Parses [uri] expecting an [InvalidConnectionStringException]; anything else fails. */
    fun expectInvalid(uri: String) {
        val result = try {
            ConnectionString.parse(uri)
        } catch (e: InvalidConnectionStringException) {
            return
        }
        throw AssertionError("expected an InvalidConnectionStringException for <$uri>, parsed as $result (warnings=${result.warnings})")
    }

    /** Parses [uri] expecting success; the spec's `warning` flag is compared with [ConnectionString.warnings]. */
    fun expectValid(uri: String, warning: Boolean?): ConnectionString {
        val cs = try {
            ConnectionString.parse(uri)
        } catch (e: InvalidConnectionStringException) {
            throw AssertionError("expected <$uri> to be valid but: ${e.message}", e)
        }
        if (warning != null) check(cs.warnings.isNotEmpty() == warning) {
            "warning expected=$warning but warnings=${cs.warnings}"
        }
        return cs
    }

    /** The spec's host type of [a]: `unix`, `ip_literal`, `ipv4` or `hostname`. */
    fun hostType(a: ServerAddress): String = when {
        a.isUnixSocket -> "unix"
        a.isIpv6Literal -> "ip_literal"
        a.host.split('.').let { p -> p.size == 4 && p.all { it.isNotEmpty() && it.length <= 3 && it.all(Char::isDigit) && it.toInt() <= 255 } } -> "ipv4"
        else -> "hostname"
    }

    fun checkHosts(cs: ConnectionString, expected: JsonArray) {
        check(cs.hosts.size == expected.size) { "hosts: expected ${expected.size}, got ${cs.hosts}" }
        for ((i, e) in expected.withIndex()) {
            val h = e.jsonObject
            val a = cs.hosts[i]
            h.str("type")?.let { check(hostType(a) == it) { "host $i type: expected $it, got ${hostType(a)} for $a" } }
            h.str("host")?.let { check(a.host == it) { "host $i: expected '$it', got '${a.host}'" } }
            (h["port"] as? JsonPrimitive)?.longOrNull?.let { check(a.port.toLong() == it) { "host $i port: expected $it, got ${a.port}" } }
        }
    }

    fun checkAuth(cs: ConnectionString, auth: JsonObject) {
        if ("username" in auth) check(cs.username == auth.str("username")) { "username: expected ${auth.str("username")}, got ${cs.username}" }
        if ("password" in auth) {
            val actual = cs.credential?.password?.let { String(it) }.takeIf { cs.hasPassword }
            check(actual == auth.str("password")) { "password does not match the expected value" }
        }
        if ("db" in auth) check(cs.database == auth.str("db")) { "db: expected ${auth.str("db")}, got ${cs.database}" }
    }

    /** Compares each expected option (key case-insensitive) with the typed value the settings hold. */
    fun checkOptions(cs: ConnectionString, expected: JsonObject) {
        val actual = cs.settings.uriOptions(includeSecrets = true)
        for ((key, want) in expected) {
            val name = actual.keys.firstOrNull { it.equals(key, ignoreCase = true) }
                ?: throw AssertionError("option '$key' is not held by the settings (have ${actual.keys})")
            val got = actual.getValue(name)
            check(matches(want, got)) { "option '$key': expected $want, got $got" }
        }
    }

    /** True when the JSON [want] equals the typed [got] (numbers by value, maps by entries, booleans and strings exactly). */
    fun matches(want: JsonElement, got: Any?): Boolean = when (want) {
        is JsonNull -> got == null
        is JsonPrimitive -> when {
            want.isString -> got is String && got == want.content
            want.booleanOrNull != null -> got == want.booleanOrNull
            want.longOrNull != null -> (got is Int || got is Long) && (got as Number).toLong() == want.longOrNull
            else -> false
        }
        is JsonArray -> got is List<*> && got.size == want.size && want.indices.all { matches(want[it], got[it]) }
        is JsonObject -> got is Map<*, *> && got.size == want.size && want.all { (k, v) ->
            val entry = got.entries.firstOrNull { it.key.toString() == k }
            entry != null && (matches(v, entry.value) || (v is JsonPrimitive && v.isString && v.content == entry.value.toString()))
        }
    }

    /** Runs one connection-string / uri-options case. */
    fun run(t: JsonObject) {
        val uri = t.str("uri") ?: ""
        if (t.bool("valid") == false) {
            expectInvalid(uri)
            return
        }
        val cs = expectValid(uri, t.bool("warning"))
        t.present("hosts")?.let { checkHosts(cs, it.jsonArray) }
        t.present("auth")?.let { checkAuth(cs, it.jsonObject) }
        t.present("options")?.let { checkOptions(cs, it.jsonObject) }
    }
}
