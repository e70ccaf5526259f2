package dev.mooring.cmap.internal.auth

import com.ongres.scram.common.StringPreparation
import java.nio.CharBuffer
import java.nio.charset.StandardCharsets
import java.security.MessageDigest

/** The password SCRAM feeds into key derivation, per mechanism (auth.md). Stateless; thread-safe. */
internal object ScramPassword {
    /**
     * SCRAM-SHA-1: the hex MD5 digest of `username:mongo:password` (no SASLprep).
     * SCRAM-SHA-256: the password prepared with SASLprep (RFC 4013); throws
     * [IllegalArgumentException] (without echoing the password) when it has prohibited characters.
     * The caller wipes the result.
     */
    fun prepare(kind: ScramKind, username: String, password: CharArray): CharArray = when (kind) {
        ScramKind.SHA_1 -> mongoDigest(username, password)
        ScramKind.SHA_256 -> try {
            StringPreparation.SASL_PREPARATION.normalize(password)
        } catch (e: IllegalArgumentException) {
            throw IllegalArgumentException("the password contains characters that SASLprep prohibits")
        }
    }

    private fun mongoDigest(username: String, password: CharArray): CharArray {
        val md5 = MessageDigest.getInstance("MD5")
        md5.update("$username:mongo:".toByteArray(StandardCharsets.UTF_8))
        val encoded = StandardCharsets.UTF_8.encode(CharBuffer.wrap(password))
        val bytes = ByteArray(encoded.remaining()).also { encoded.get(it) }
        md5.update(bytes)
        bytes.fill(0)
        if (encoded.hasArray()) encoded.array().fill(0)
        val digest = md5.digest()
        val hex = CharArray(digest.size * 2)
        val digits = "0123456789abcdef"
        for (i in digest.indices) {
            val v = digest[i].toInt() and 0xff
            hex[2 * i] = digits[v ushr 4]
            hex[2 * i + 1] = digits[v and 0x0f]
        }
        return hex
    }
}
