package dev.mooring.sdam.internal.uri

import dev.mooring.sdam.InvalidConnectionStringException
import dev.mooring.sdam.ReadPreferenceMode
import dev.mooring.sdam.ServerMonitoringMode
import dev.mooring.cmap.internal.connection.ConnectionSettingsRules

/**
 * The options of one connection string.
 *
 * @property raw every key as given (lower-cased) with its decoded values in order, unknown keys included.
 * @property typed each supported option with a valid value, by canonical name, after aliases and repeats.
 * @property present canonical names of supported options that appeared (through an alias too), valid or not.
 * @property warnings what was ignored and why, in order.
 */
internal class ParsedOptions(
    val raw: Map<String, List<String>>,
    val typed: Map<String, Any>,
    val present: Set<String>,
    val warnings: List<String>,
)

/**
 * Reads the option string of a connection string (connection-string-spec.md "Connection
 * Options", uri-options.md): `&`-separated `key=value` pairs, keys case-insensitive, keys and
 * values percent-decoded. Unknown keys and invalid values are ignored with a warning;
 * repeated keys keep the last value with a warning (except `readPreferenceTags`, which
 * accumulates, and the SOCKS5 options, which are errors); deprecated keys are mapped with a
 * warning; conflicting TLS options and `tls`/`ssl` disagreements are errors.
 */
internal object OptionReader {
    fun read(query: String?): ParsedOptions {
        val warnings = ArrayList<String>()
        val raw = LinkedHashMap<String, MutableList<String>>()
        val spelling = HashMap<String, String>()
        if (query != null) {
            for (segment in query.split('&')) {
                if (segment.isEmpty()) continue
                val eq = segment.indexOf('=')
                if (eq < 0) {
                    val key = PercentCodec.decode(segment, "an option key")
                    throw InvalidConnectionStringException("option '$key' has no value; options must be given as key=value")
                }
                val key = PercentCodec.decode(segment.substring(0, eq), "an option key")
                if (key.isEmpty()) throw InvalidConnectionStringException("an option has an empty key")
                val lower = key.asciiLowercase()
                val sensitive = OptionDefs.byKey[lower]?.sensitive == true || lower == "sslpemkeypassword"
                val value = PercentCodec.decode(segment.substring(eq + 1), "the value of option '$key'", showText = !sensitive)
                raw.getOrPut(lower) { ArrayList() }.add(value)
                spelling.putIfAbsent(lower, key)
            }
        }

        val effective = LinkedHashMap<String, List<String>>()
        var slaveOk: Boolean? = null
        var gssapiServiceName: String? = null
        for ((key, values) in raw) {
            val shown = spelling.getValue(key)
            val def = OptionDefs.byKey[key]
            when {
                key == "tls" || key == OptionDefs.SSL -> effective.getOrPut("tls") { tlsValues(raw) }
                def != null -> effective[def.name] = values
                key in OptionDefs.deprecated -> {
                    val target = OptionDefs.deprecated.getValue(key)
                    if (target.lowercase() in raw) {
                        warnings += "Deprecated key \"$shown\" present and ignored as found replacement \"$target\" value."
                    } else {
                        warnings += "Deprecated key \"$shown\" has been replaced with \"$target\""
                        effective[target] = values
                    }
                }
                key == OptionDefs.SLAVE_OK -> {
                    warnings += "Deprecated key \"$shown\" has been replaced with \"readPreference\""
                    slaveOk = parseBoolean(values.last())
                    if (slaveOk == null) warnings += invalidValue(shown, values.last(), "true or false", false)
                }
                key == OptionDefs.GSSAPI_SERVICE_NAME -> {
                    warnings += "Deprecated key \"$shown\" has been replaced with \"authMechanismProperties=SERVICE_NAME:<name>\""
                    gssapiServiceName = values.last()
                }
                key in OptionDefs.singleThreadedOnly ->
                    warnings += "Option '$shown' applies only to single-threaded drivers and is ignored"
                else -> warnings += "Unsupported option '$shown'."
            }
        }

        for (p in OptionDefs.proxyOptions) {
            val name = OptionDefs.byKey.getValue(p).name
            if ((effective[name]?.size ?: 0) > 1) throw InvalidConnectionStringException("option '$name' must not be repeated")
        }
        val present = effective.keys.toSet()
        for ((a, b) in OptionDefs.tlsConflicts) {
            if (a in present && b in present) throw InvalidConnectionStringException("options '$a' and '$b' cannot both be given")
        }

        val typed = LinkedHashMap<String, Any>()
        for ((name, values) in effective) {
            val def = OptionDefs.of(name)
            if (def.type == OptionType.TAG_SETS) {
                val sets = values.mapNotNull { v ->
                    parseKeyValues(v, name, allowEmpty = true, warnings = warnings).also {
                        if (it == null) warnings += invalidValue(name, v, def.accepted, def.sensitive)
                    }
                }
                if (sets.isNotEmpty()) typed[name] = sets
                continue
            }
            if (values.size > 1 && name != "tls") warnings += "Repeated option '$name'; the last value is used"
            val value = values.last()
            if ((name == "authSource" || name == "authMechanism") && value.isEmpty()) {
                throw InvalidConnectionStringException("option '$name' must not be empty")
            }
            if (value.isEmpty() && def.type != OptionType.STRING) {
                warnings += "Empty value for \"$name\" is ignored"
                continue
            }
            val parsed = parseValue(def, value, warnings)
            if (parsed == null || !def.valid(parsed)) {
                warnings += invalidValue(name, value, def.accepted, def.sensitive)
                continue
            }
            typed[name] = parsed
        }
        val compressors = typed["compressors"]
        if (compressors is List<*>) {
            val known = compressors.map { it as String }.filter { c ->
                (c in ConnectionSettingsRules.COMPRESSORS).also { if (!it) warnings += "Unsupported compressor '$c' is ignored" }
            }.distinct()
            typed["compressors"] = known
        }
        if (slaveOk == true && "readPreference" !in effective) typed["readPreference"] = ReadPreferenceMode.SECONDARY_PREFERRED.value
        val gssapi = gssapiServiceName
        if (gssapi != null) {
            @Suppress("UNCHECKED_CAST")
            val props = LinkedHashMap(typed["authMechanismProperties"] as Map<String, String>? ?: emptyMap())
            if (props.keys.none { it.equals("SERVICE_NAME", ignoreCase = true) }) props["SERVICE_NAME"] = gssapi
            typed["authMechanismProperties"] = props
        }
        return ParsedOptions(raw, typed, present, warnings)
    }

    /** All `tls` and `ssl` values must agree (uri-options.md rule 8); the agreed value, once. */
    private fun tlsValues(raw: Map<String, List<String>>): List<String> {
        val all = (raw["tls"] ?: emptyList()) + (raw[OptionDefs.SSL] ?: emptyList())
        if (all.map { it.asciiLowercase() }.toSet().size > 1) {
            throw InvalidConnectionStringException("options 'tls' and 'ssl' must all have the same value")
        }
        return listOf(all.last())
    }

    private fun invalidValue(name: String, value: String, accepted: String, sensitive: Boolean): String {
        val shown = if (sensitive) "" else " : \"$value\""
        val expected = if (accepted.isNotEmpty()) " (expected $accepted)" else ""
        return "Unsupported value for \"$name\"$shown$expected; the option is ignored"
    }

    private fun parseValue(def: OptionDef, value: String, warnings: MutableList<String>): Any? = when (def.type) {
        OptionType.STRING -> value
        OptionType.INT -> if (INTEGER.matches(value)) value.toIntOrNull() else null
        OptionType.LONG -> if (INTEGER.matches(value)) value.toLongOrNull() else null
        OptionType.BOOLEAN -> parseBoolean(value)
        OptionType.STRING_LIST -> value.split(',').filter { it.isNotEmpty() }.ifEmpty { null }
        OptionType.KEY_VALUES -> parseKeyValues(value, def.name, allowEmpty = false, warnings = warnings)
        OptionType.TAG_SETS -> error("tag sets are parsed per occurrence")
        OptionType.WRITE_W -> when {
            value.all { it in '0'..'9' } -> value.toIntOrNull()
            INTEGER.matches(value) -> null
            else -> value
        }
        OptionType.READ_PREFERENCE -> ReadPreferenceMode.fromValue(value)?.value
        OptionType.MONITORING_MODE -> ServerMonitoringMode.fromValue(value)?.value
    }

    private fun parseBoolean(value: String): Boolean? = when (value.asciiLowercase()) {
        "true" -> true
        "false" -> false
        else -> null
    }

    /**
     * `k1:v1,k2:v2`: the key is everything up to the first `:` (values may hold `:`). For
     * `authMechanismProperties`, a piece with no `:` continues the previous value (a value
     * that held a `,`), with a warning, since such values must not be given in a URI.
     */
    private fun parseKeyValues(value: String, name: String, allowEmpty: Boolean, warnings: MutableList<String>): Map<String, String>? {
        if (value.isEmpty()) return if (allowEmpty) emptyMap() else null
        val out = LinkedHashMap<String, String>()
        var lastKey: String? = null
        for (piece in value.split(',')) {
            val colon = piece.indexOf(':')
            if (colon < 0 && lastKey != null && name == "authMechanismProperties") {
                out[lastKey] = out.getValue(lastKey) + "," + piece
                warnings += "The value of $name '$lastKey' contains ','; values containing ',' must not be given in a " +
                    "connection string (use the settings API instead)"
                continue
            }
            if (colon <= 0) return null
            lastKey = piece.substring(0, colon)
            out[lastKey] = piece.substring(colon + 1)
        }
        return out
    }

    private val INTEGER = Regex("^-?[0-9]+$")

    private fun String.asciiLowercase(): String = buildString(length) {
        for (c in this@asciiLowercase) append(if (c in 'A'..'Z') c + 32 else c)
    }
}
