package dev.mooring.spec.unified

import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonObject

/**
 * The `kmsProviders` document of a `clientEncryption` entity or of `autoEncryptOpts`
 * (unified-test-format.md "entity_clientEncryption"), checked as a driver's ClientEncryptionOpts
 * check theirs: at least one provider; each provider named `<type>` or `<type>:<name>` with a
 * known type; a provider given as an empty document asks for on-demand credentials (allowed);
 * otherwise it must carry every required credential field of its type (a field given as
 * `{$$placeholder: 1}` counts: the runner would fill it in), and no unknown field. Mooring has
 * no client-side encryption, so the runner never configures the providers; it only refuses
 * malformed ones ([UnifiedTestFailure.InvalidTestFile]). Pure.
 */
object KmsProviders {
    /** Each type's credential sets, any one of which is complete, and its optional fields. */
    private class Type(val complete: List<Set<String>>, val optional: Set<String> = emptySet())

    private val TYPES = mapOf(
        "aws" to Type(listOf(setOf("accessKeyId", "secretAccessKey")), setOf("sessionToken")),
        "azure" to Type(listOf(setOf("tenantId", "clientId", "clientSecret"), setOf("accessToken")), setOf("identityPlatformEndpoint")),
        "gcp" to Type(listOf(setOf("email", "privateKey"), setOf("accessToken")), setOf("endpoint")),
        "kmip" to Type(listOf(setOf("endpoint"))),
        "local" to Type(listOf(setOf("key"))),
    )

    /** Raises [UnifiedTestFailure.InvalidTestFile] unless [value] (of [owner]) is a well-formed kmsProviders document. */
    fun requireValid(owner: String, value: JsonElement?) {
        val providers = value as? JsonObject ?: invalidTest("$owner: kmsProviders is required and must be a document")
        if (providers.isEmpty()) invalidTest("$owner: kmsProviders configures no KMS provider (at least one is required)")
        for ((name, credentials) in providers) {
            val typeName = name.substringBefore(':')
            val type = TYPES[typeName] ?: invalidTest("$owner: unknown KMS provider '$name' (known: ${TYPES.keys.joinToString()})")
            val fields = credentials as? JsonObject ?: invalidTest("$owner: KMS provider '$name' must be a document")
            if (fields.isEmpty()) continue // on-demand credentials
            val known = type.complete.flatten().toSet() + type.optional
            (fields.keys - known).firstOrNull()?.let { invalidTest("$owner: KMS provider '$name' has no field '$it'") }
            if (type.complete.none { fields.keys.containsAll(it) }) {
                val missing = type.complete.minBy { (it - fields.keys).size } - fields.keys
                invalidTest("$owner: KMS provider '$name' lacks the credential field(s) ${missing.joinToString()}")
            }
        }
    }
}
