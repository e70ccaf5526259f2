package dev.mooring.cmap.internal.auth

import com.ongres.scram.client.ScramClient
import com.ongres.scram.common.StringPreparation
import com.ongres.scram.common.exception.ScramInvalidServerSignatureException
import com.ongres.scram.common.exception.ScramParseException
import com.ongres.scram.common.exception.ScramServerErrorException
import java.nio.charset.StandardCharsets

/** Why the client gave up on a SCRAM conversation. The message never contains the password. */
internal class ScramFailure(message: String, cause: Throwable? = null) : Exception(message, cause)

/**
 * The client side of one SCRAM conversation (RFC 5802 as profiled by auth.md), on top of the
 * scram-client library: client-first, then client-final for the server-first message (enforcing
 * the 4096 minimum iteration count), then the server signature check. One per connection;
 * not thread-safe (used by one establishing connection).
 *
 * @param nonce a fixed client nonce, for the auth.md test vectors only.
 */
internal class ScramConversation(
    val kind: ScramKind,
    username: String,
    password: CharArray,
    nonce: String? = null,
) {
    private val client: ScramClient

    init {
        val prepared = ScramPassword.prepare(kind, username, password)
        try {
            var builder = ScramClient.builder()
                .advertisedMechanisms(listOf(kind.mechanismName))
                .username(username)
                .password(prepared)
                .stringPreparation(StringPreparation.NO_PREPARATION)
            if (nonce != null) builder = builder.nonceSupplier { nonce }
            client = builder.build()
        } finally {
            prepared.fill('\u0000')
        }
    }

    /** The client-first message (`n,,n=user,r=nonce`). */
    val clientFirst: ByteArray = client.clientFirstMessage().toString().toByteArray(StandardCharsets.UTF_8)

    /** Processes the server-first message and returns the client-final message. */
    fun clientFinal(serverFirst: ByteArray): ByteArray {
        val parsed = try {
            client.serverFirstMessage(String(serverFirst, StandardCharsets.UTF_8))
        } catch (e: ScramParseException) {
            throw ScramFailure("invalid server-first message: ${e.message}", e)
        } catch (e: IllegalArgumentException) {
            throw ScramFailure("invalid server-first message: ${e.message}", e)
        } catch (e: IllegalStateException) {
            throw ScramFailure("invalid server-first message: ${e.message}", e)
        }
        if (parsed.iterationCount < MIN_ITERATIONS) {
            throw ScramFailure("the server asked for ${parsed.iterationCount} iterations, fewer than the minimum of $MIN_ITERATIONS")
        }
        return client.clientFinalMessage().toString().toByteArray(StandardCharsets.UTF_8)
    }

    /** Verifies the server-final message: the server must prove it knows the password. */
    fun verifyServerFinal(serverFinal: ByteArray) {
        try {
            client.serverFinalMessage(String(serverFinal, StandardCharsets.UTF_8))
        } catch (e: ScramInvalidServerSignatureException) {
            throw ScramFailure("the server signature is invalid: the server did not prove that it knows the password", e)
        } catch (e: ScramServerErrorException) {
            throw ScramFailure("the server reported a SCRAM error: ${e.message}", e)
        } catch (e: ScramParseException) {
            throw ScramFailure("invalid server-final message: ${e.message}", e)
        } catch (e: IllegalArgumentException) {
            throw ScramFailure("invalid server-final message: ${e.message}", e)
        } catch (e: IllegalStateException) {
            throw ScramFailure("invalid server-final message: ${e.message}", e)
        }
    }

    companion object {
        /** auth.md: drivers MUST enforce a minimum iteration count of 4096. */
        const val MIN_ITERATIONS = 4096
    }
}
