package dev.mooring.spec.unified

import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive

/**
 * The schema versions of the unified test format this runner interprets (unified-test-format.md,
 * "Schema Version", "Test Runner Support"): a file is compatible when its schemaVersion has the
 * major version of a supported one and is not newer than it; anything else (another major
 * version, a newer minor or patch, a malformed or missing version) is refused before the file
 * is processed. Pure.
 */
object UnifiedSchemaVersion {
    /** The version of the format this runner was written against (the spec's "Current Schema Version"). */
    val SUPPORTED: List<String> = listOf("1.28.0")

    /**
     * Raises [UnifiedTestFailure.IncompatibleSchemaVersion] unless [file]'s schemaVersion is
     * compatible with one of [supported].
     */
    fun requireCompatible(file: JsonObject, supported: List<String> = SUPPORTED) {
        val declared = (file["schemaVersion"] as? JsonPrimitive)?.takeIf { it.isString }?.content
            ?: throw UnifiedTestFailure.IncompatibleSchemaVersion("the file declares no schemaVersion string (required)")
        val version = parse(declared)
            ?: throw UnifiedTestFailure.IncompatibleSchemaVersion("schemaVersion '$declared' is not a version string (<major>[.<minor>[.<patch>]])")
        if (supported.none { compatible(version, parse(it)!!) }) {
            throw UnifiedTestFailure.IncompatibleSchemaVersion(
                "schemaVersion $declared is not compatible with this runner (it supports ${supported.joinToString()}: the same major " +
                    "version, at most that minor and patch)",
            )
        }
    }

    private fun compatible(file: List<Int>, supported: List<Int>): Boolean =
        file[0] == supported[0] && compareValuesBy(file, supported, { it[1] }, { it[2] }) <= 0

    /** `<major>[.<minor>[.<patch>]]`, missing components zero; components after the patch are discarded (Version String). */
    internal fun parse(s: String): List<Int>? {
        val parts = s.split('.')
        if (parts.isEmpty() || parts.take(3).any { p -> p.isEmpty() || !p.all { it.isDigit() } }) return null
        val numbers = parts.take(3).map { it.toIntOrNull() ?: return null }
        return numbers + List(3 - numbers.size) { 0 }
    }
}
