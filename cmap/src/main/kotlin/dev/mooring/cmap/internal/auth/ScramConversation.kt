package dev.mooring.cmap.internal.auth

import com.ongres.scram.common.ScramFunctions
import com.ongres.scram.common.StringPreparation
import java.nio.charset.StandardCharsets
import java.security.MessageDigest
import java.security.SecureRandom
import java.util.Base64

/** Why the client gave up on a SCRAM conversation. The message never contains the password. */
internal class ScramFailure(message: String, cause: Throwable? = null) : Exception(message, cause)

/**
 * The client side of one SCRAM conversation (RFC 5802 as profiled by auth.md): client-first,
 * client-final for the server-first message (enforcing the 4096 minimum iteration count and the
 * nonce rule), then the server signature check.
 *
 * The key derivation (PBKDF2), HMACs, proofs and SASLprep come from the maintained
 * com.ongres.scram library (scram-common: [ScramFunctions], [StringPreparation]); the messages are
 * formatted here because that library's `ScramClient` SASLprep's the user name, which auth.md
 * forbids ("User names MUST NOT be prepared with SASLprep").
 *
 * One per connection; not thread-safe (used by one establishing connection).
 *
 * @param nonce a fixed client nonce, for the auth.md test vectors only.
 */
internal class ScramConversation(
    val kind: ScramKind,
    username: String,
    password: CharArray,
    nonce: String? = null,
) {
    private val clientNonce: String = nonce ?: Base64.getEncoder().encodeToString(ByteArray(24).also { RANDOM.nextBytes(it) })
    private val clientFirstBare = "n=${escape(username)},r=$clientNonce"
    private var prepared: CharArray? = ScramPassword.prepare(kind, username, password)
    private var expectedServerSignature: ByteArray? = null

    /** The client-first message (`n,,n=user,r=nonce`). */
    val clientFirst: ByteArray = "n,,$clientFirstBare".toByteArray(StandardCharsets.UTF_8)

    /** Processes the server-first message and returns the client-final message. */
    fun clientFinal(serverFirst: ByteArray): ByteArray {
        val pw = prepared ?: throw ScramFailure("the conversation already sent its final message")
        try {
            val message = String(serverFirst, StandardCharsets.UTF_8)
            val attrs = attributes(message)
            if (attrs.containsKey("m")) throw ScramFailure("the server requires an unsupported SCRAM extension")
            val serverNonce = attrs["r"] ?: throw ScramFailure("invalid server-first message: no nonce")
            if (!serverNonce.startsWith(clientNonce) || serverNonce.length == clientNonce.length) {
                throw ScramFailure("invalid server-first message: the server nonce does not extend the client nonce")
            }
            val salt = try {
                Base64.getDecoder().decode(attrs["s"] ?: throw ScramFailure("invalid server-first message: no salt"))
            } catch (e: IllegalArgumentException) {
                throw ScramFailure("invalid server-first message: the salt is not base64")
            }
            val iterations = attrs["i"]?.toIntOrNull() ?: throw ScramFailure("invalid server-first message: no iteration count")
            if (iterations < MIN_ITERATIONS) {
                throw ScramFailure("the server asked for $iterations iterations, fewer than the minimum of $MIN_ITERATIONS")
            }
            val mech = kind.library
            val salted = ScramFunctions.saltedPassword(mech, StringPreparation.NO_PREPARATION, pw, salt, iterations)
            val clientKey = ScramFunctions.clientKey(mech, salted)
            val storedKey = ScramFunctions.storedKey(mech, clientKey)
            val withoutProof = "c=biws,r=$serverNonce"
            val authMessage = "$clientFirstBare,$message,$withoutProof"
            val proof = ScramFunctions.clientProof(clientKey, ScramFunctions.clientSignature(mech, storedKey, authMessage))
            expectedServerSignature = ScramFunctions.serverSignature(mech, ScramFunctions.serverKey(mech, salted), authMessage)
            salted.fill(0)
            clientKey.fill(0)
            return "$withoutProof,p=${Base64.getEncoder().encodeToString(proof)}".toByteArray(StandardCharsets.UTF_8)
        } finally {
            pw.fill('\u0000')
            prepared = null
        }
    }

    /** Wipes the prepared password of a conversation that will not continue (an unanswered speculative start). */
    fun discard() {
        prepared?.fill('\u0000')
        prepared = null
    }

    /** Verifies the server-final message: the server must prove it knows the password. */
    fun verifyServerFinal(serverFinal: ByteArray) {
        val expected = expectedServerSignature ?: throw ScramFailure("server-final message before the client-final message")
        val attrs = attributes(String(serverFinal, StandardCharsets.UTF_8))
        attrs["e"]?.let { throw ScramFailure("the server reported a SCRAM error: $it") }
        val v = attrs["v"] ?: throw ScramFailure("invalid server-final message: no server signature")
        val actual = try {
            Base64.getDecoder().decode(v)
        } catch (e: IllegalArgumentException) {
            throw ScramFailure("invalid server-final message: the server signature is not base64")
        }
        if (!MessageDigest.isEqual(expected, actual)) {
            throw ScramFailure("the server signature is invalid: the server did not prove that it knows the password")
        }
    }

    private fun attributes(message: String): Map<String, String> {
        val out = HashMap<String, String>()
        if (message.isEmpty()) return out
        for (part in message.split(',')) {
            if (part.length < 2 || part[1] != '=') throw ScramFailure("malformed SCRAM message")
            out.putIfAbsent(part.substring(0, 1), part.substring(2))
        }
        return out
    }

    companion object {
        /** auth.md: drivers MUST enforce a minimum iteration count of 4096. */
        const val MIN_ITERATIONS = 4096
        private val RANDOM = SecureRandom()

        /** RFC 5802 saslname escaping: `=` becomes `=3D` and `,` becomes `=2C`; nothing else changes. */
        fun escape(username: String): String = username.replace("=", "=3D").replace(",", "=2C")
    }
}
