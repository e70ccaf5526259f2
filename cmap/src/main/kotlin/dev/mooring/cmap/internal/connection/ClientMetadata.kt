package dev.mooring.cmap.internal.connection

import dev.mooring.cmap.DriverInfo
import org.bson.BsonDocument
import org.bson.BsonString
import org.bson.RawBsonDocument
import java.io.File

/**
 * Builds the handshake's `client` document (handshake.md) and keeps it within 512 bytes,
 * applying the spec's truncation order: (1) keep only `env.name`, (2) keep only `os.type`,
 * (3) drop `env`, (4) truncate `platform`. Pure; thread-safe.
 */
internal object ClientMetadata {
    const val MAX_DOCUMENT_SIZE: Int = 512
    const val MAX_APP_NAME_BYTES: Int = 128
    const val DRIVER_NAME: String = "mooring"

    /** The driver's version: the jar manifest's Implementation-Version, else the build's version. */
    val driverVersion: String by lazy { ClientMetadata::class.java.`package`?.implementationVersion ?: "0.1.0-SNAPSHOT" }

    /** Everything the document is built from; defaults read the running JVM and process. */
    class Inputs(
        val appName: String?,
        val driverInfo: List<DriverInfo> = emptyList(),
        val env: Map<String, String> = System.getenv(),
        val dockerEnvExists: Boolean = File("/.dockerenv").exists(),
        val osName: String = System.getProperty("os.name") ?: "",
        val osArch: String? = System.getProperty("os.arch"),
        val osVersion: String? = System.getProperty("os.version"),
        val javaVendor: String = System.getProperty("java.vendor") ?: "unknown",
        val javaVersion: String = System.getProperty("java.runtime.version") ?: System.getProperty("java.version") ?: "unknown",
    )

    /** The `client` document for [inputs]; the application name was checked with the settings (ConnectionSettingsRules). */
    fun build(inputs: Inputs): BsonDocument {
        val doc = BsonDocument()
        inputs.appName?.let { doc["application"] = BsonDocument("name", BsonString(it)) }
        val infos = inputs.driverInfo.distinct() // a duplicate DriverInfo is appended once (handshake.md)
        doc["driver"] = BsonDocument()
            .append("name", BsonString((listOf(DRIVER_NAME) + infos.map { it.name }).joinToString("|")))
            .append("version", BsonString((listOf(driverVersion) + infos.mapNotNull { it.version }).joinToString("|")))
        val os = BsonDocument("type", BsonString(osType(inputs.osName)))
        if (inputs.osName.isNotEmpty()) os["name"] = BsonString(inputs.osName)
        inputs.osArch?.takeIf { it.isNotEmpty() }?.let { os["architecture"] = BsonString(it) }
        inputs.osVersion?.takeIf { it.isNotEmpty() }?.let { os["version"] = BsonString(it) }
        doc["os"] = os
        val platform = (
            listOf("Java/${inputs.javaVendor}/${inputs.javaVersion}, Kotlin/${KotlinVersion.CURRENT}") +
                infos.mapNotNull { it.platform }
            ).joinToString("|")
        doc["platform"] = BsonString(platform)
        ClientEnvironment.detect(inputs.env, inputs.dockerEnvExists)?.let { doc["env"] = it }
        return truncate(doc)
    }

    /** `uname -s` style names: Linux, Darwin, Windows, ... or `unknown`. */
    fun osType(osName: String): String {
        val n = osName.lowercase()
        return when {
            n.isEmpty() -> "unknown"
            n.startsWith("linux") -> "Linux"
            n.startsWith("mac") || n.startsWith("darwin") -> "Darwin"
            n.startsWith("windows") -> "Windows"
            n.contains("bsd") -> "BSD"
            n.startsWith("sunos") || n.startsWith("solaris") || n.startsWith("aix") || n.startsWith("hp-ux") -> "Unix"
            else -> osName
        }
    }

    fun size(doc: BsonDocument): Int = RawBsonDocument(doc, org.bson.codecs.BsonDocumentCodec()).byteBuffer.remaining()

    /** Applies the truncation order until [doc] fits; returns a new document. */
    fun truncate(original: BsonDocument): BsonDocument {
        val doc = original.clone()
        if (size(doc) <= MAX_DOCUMENT_SIZE) return doc
        (doc["env"] as? BsonDocument)?.let { env ->
            val name = env["name"]
            doc["env"] = if (name != null) BsonDocument("name", name) else BsonDocument()
        }
        if (size(doc) <= MAX_DOCUMENT_SIZE) return doc.also { dropEmptyEnv(it) }
        (doc["os"] as? BsonDocument)?.let { os -> doc["os"] = BsonDocument("type", os["type"] ?: BsonString("unknown")) }
        if (size(doc) <= MAX_DOCUMENT_SIZE) return doc.also { dropEmptyEnv(it) }
        doc.remove("env")
        if (size(doc) <= MAX_DOCUMENT_SIZE) return doc
        val platform = (doc["platform"] as? BsonString)?.value ?: return doc
        val excess = size(doc) - MAX_DOCUMENT_SIZE
        val bytes = platform.toByteArray(Charsets.UTF_8)
        val keep = truncateUtf8(platform, bytes.size - excess)
        if (keep.isEmpty()) doc.remove("platform") else doc["platform"] = BsonString(keep)
        return doc
    }

    private fun dropEmptyEnv(doc: BsonDocument) {
        if ((doc["env"] as? BsonDocument)?.isEmpty() == true) doc.remove("env")
    }

    /** The longest prefix of [s] whose UTF-8 encoding has at most [maxBytes] bytes. */
    fun truncateUtf8(s: String, maxBytes: Int): String {
        if (maxBytes <= 0) return ""
        var bytes = 0
        var i = 0
        while (i < s.length) {
            val cp = s.codePointAt(i)
            val n = when {
                cp < 0x80 -> 1
                cp < 0x800 -> 2
                cp < 0x10000 -> 3
                else -> 4
            }
            if (bytes + n > maxBytes) break
            bytes += n
            i += Character.charCount(cp)
        }
        return s.substring(0, i)
    }
}
