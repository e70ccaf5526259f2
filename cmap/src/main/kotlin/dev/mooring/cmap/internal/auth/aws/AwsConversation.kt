package dev.mooring.cmap.internal.auth.aws

import dev.mooring.cmap.internal.auth.AuthFailure
import org.bson.BsonBinary
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString
import org.bson.RawBsonDocument
import org.bson.codecs.BsonDocumentCodec
import java.security.MessageDigest
import java.security.SecureRandom
import java.time.ZonedDateTime
import java.util.Base64

/**
 * The client side of one MONGODB-AWS conversation (auth.md): the client-first message (32 random
 * bytes of nonce, gs2-cb-flag `n`), then, for the server-first message, the checks on the server
 * nonce and the STS host and the signed `sts:GetCallerIdentity` request (the client-second
 * message). Not thread-safe (one per connection).
 */
internal class AwsConversation(nonce: ByteArray? = null) {
    private val clientNonce: ByteArray = nonce?.copyOf() ?: ByteArray(NONCE_LENGTH).also { RANDOM.nextBytes(it) }

    init {
        require(clientNonce.size == NONCE_LENGTH) { "the client nonce must be $NONCE_LENGTH bytes" }
    }

    /** `{r: <client nonce>, p: 110}` as BSON. */
    val clientFirst: ByteArray = bson(BsonDocument("r", BsonBinary(clientNonce)).append("p", BsonInt32(GS2_CB_FLAG_N)))

    /** Checks the server-first message and returns the client-second message signed with [credentials] at [now]. */
    fun clientSecond(serverFirst: ByteArray, credentials: AwsCredentials, now: ZonedDateTime): ByteArray {
        val doc = try {
            RawBsonDocument(serverFirst).decode(BsonDocumentCodec())
        } catch (e: RuntimeException) {
            throw AuthFailure("the server's first MONGODB-AWS message is not BSON")
        }
        val serverNonce = (doc["s"] as? BsonBinary)?.data ?: throw AuthFailure("the server's first message has no server nonce")
        if (serverNonce.size != 2 * NONCE_LENGTH) {
            throw AuthFailure("the server nonce is ${serverNonce.size} bytes, expected ${2 * NONCE_LENGTH}")
        }
        if (!MessageDigest.isEqual(serverNonce.copyOf(NONCE_LENGTH), clientNonce)) {
            throw AuthFailure("the server nonce does not start with the client nonce")
        }
        val host = doc["h"]?.takeIf { it.isString }?.asString()?.value ?: throw AuthFailure("the server's first message has no STS host")
        val region = region(host)
        val date = SigV4.amzDate(now)
        val headers = LinkedHashMap<String, String>()
        headers["Content-Type"] = "application/x-www-form-urlencoded"
        headers["Content-Length"] = BODY.size.toString()
        headers["Host"] = host
        headers["X-Amz-Date"] = date
        credentials.sessionToken?.let { headers["X-Amz-Security-Token"] = it }
        headers["X-MongoDB-Server-Nonce"] = Base64.getEncoder().encodeToString(serverNonce)
        headers["X-MongoDB-GS2-CB-Flag"] = "n"
        val request = SigV4.Request("POST", "/", "", headers, BODY, region, "sts", date)
        val out = BsonDocument("a", BsonString(SigV4.authorization(request, credentials.accessKeyId, credentials.secretAccessKey)))
            .append("d", BsonString(date))
        credentials.sessionToken?.let { out.append("t", BsonString(it)) }
        return bson(out)
    }

    companion object {
        const val NONCE_LENGTH = 32
        const val GS2_CB_FLAG_N = 'n'.code
        val BODY: ByteArray = "Action=GetCallerIdentity&Version=2011-06-15".toByteArray()
        private val RANDOM = SecureRandom()

        /**
         * auth.md "Region Calculation", after the host checks (1..255 bytes, no empty label, no
         * leading or trailing period): `us-east-1` for the global endpoint and for a host without
         * periods, else the second label.
         */
        fun region(host: String): String {
            val size = host.toByteArray().size
            if (size == 0 || size > 255) throw AuthFailure("the STS host must be 1 to 255 bytes long, was $size")
            val labels = host.split('.')
            if (labels.any { it.isEmpty() }) throw AuthFailure("the STS host '$host' has an empty label")
            return when {
                host == "sts.amazonaws.com" || host == "aws.amazonaws.com" -> "us-east-1"
                labels.size > 1 -> labels[1]
                else -> "us-east-1"
            }
        }

        private fun bson(doc: BsonDocument): ByteArray {
            val out = org.bson.io.BasicOutputBuffer()
            BsonDocumentCodec().encode(org.bson.BsonBinaryWriter(out), doc, org.bson.codecs.EncoderContext.builder().build())
            return out.toByteArray()
        }
    }
}
