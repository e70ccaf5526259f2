package dev.mooring.cmap.internal.auth.aws

import java.security.MessageDigest
import java.time.ZoneOffset
import java.time.ZonedDateTime
import java.time.format.DateTimeFormatter
import javax.crypto.Mac
import javax.crypto.spec.SecretKeySpec

/**
 * AWS Signature Version 4 (the "Signature Version 4 signing process" auth.md refers to): the
 * canonical request, the string to sign, the derived signing key and the Authorization header.
 * Stateless; thread-safe.
 */
internal object SigV4 {
    const val ALGORITHM = "AWS4-HMAC-SHA256"

    /** One request to sign. [headers] are lower-cased by [authorization]; [query] is already canonical (sorted, encoded). */
    class Request(
        val method: String,
        val path: String,
        val query: String,
        val headers: Map<String, String>,
        val body: ByteArray,
        val region: String,
        val service: String,
        /** `yyyyMMdd'T'HHmmss'Z'`, the X-Amz-Date value. */
        val amzDate: String,
    )

    private val AMZ_DATE: DateTimeFormatter = DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'")

    fun amzDate(time: ZonedDateTime): String = AMZ_DATE.format(time.withZoneSameInstant(ZoneOffset.UTC))

    /** The canonical request (step 1). */
    fun canonicalRequest(r: Request): String {
        val headers = r.headers.entries.associate { it.key.lowercase() to it.value.trim().replace(Regex(" +"), " ") }.toSortedMap()
        val canonicalHeaders = headers.entries.joinToString("") { "${it.key}:${it.value}\n" }
        return listOf(r.method, r.path, r.query, canonicalHeaders, headers.keys.joinToString(";"), hex(sha256(r.body))).joinToString("\n")
    }

    /** The `Authorization` header value for [r] signed with [accessKeyId] / [secretAccessKey]. */
    fun authorization(r: Request, accessKeyId: String, secretAccessKey: String): String {
        val day = r.amzDate.substring(0, 8)
        val scope = "$day/${r.region}/${r.service}/aws4_request"
        val canonical = canonicalRequest(r)
        val stringToSign = "$ALGORITHM\n${r.amzDate}\n$scope\n${hex(sha256(canonical.toByteArray()))}"
        var key = hmac("AWS4$secretAccessKey".toByteArray(), day)
        key = hmac(key, r.region)
        key = hmac(key, r.service)
        key = hmac(key, "aws4_request")
        val signature = hex(hmac(key, stringToSign))
        key.fill(0)
        val signed = r.headers.keys.map { it.lowercase() }.sorted().joinToString(";")
        return "$ALGORITHM Credential=$accessKeyId/$scope, SignedHeaders=$signed, Signature=$signature"
    }

    fun sha256(bytes: ByteArray): ByteArray = MessageDigest.getInstance("SHA-256").digest(bytes)

    private fun hmac(key: ByteArray, data: String): ByteArray =
        Mac.getInstance("HmacSHA256").apply { init(SecretKeySpec(key, "HmacSHA256")) }.doFinal(data.toByteArray())

    fun hex(bytes: ByteArray): String = bytes.joinToString("") { "%02x".format(it) }
}
