package dev.mooring.testkit.server.auth

import dev.mooring.testkit.server.RequestContext
import dev.mooring.testkit.server.WireServer
import org.bson.BsonBinary
import org.bson.BsonBinaryWriter
import org.bson.BsonBoolean
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString
import org.bson.RawBsonDocument
import org.bson.codecs.BsonDocumentCodec
import org.bson.codecs.EncoderContext
import org.bson.io.BasicOutputBuffer
import java.security.MessageDigest
import java.security.SecureRandom
import java.util.Base64
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.atomic.AtomicInteger
import javax.crypto.Mac
import javax.crypto.spec.SecretKeySpec

/**
 * Server-side MONGODB-AWS without AWS: where mongod forwards the signed GetCallerIdentity request
 * to STS, this server verifies it itself, recomputing the Signature Version 4 signature with the
 * secret of the access key id the request names. It checks the client nonce and gs2-cb-flag, the
 * signed headers (content-length, content-type, host, x-amz-date, x-amz-security-token when a
 * session token is used, x-mongodb-gs2-cb-flag, x-mongodb-server-nonce), the region derived from
 * [stsHost], and the session token. Thread-safe; conversations are per connection.
 */
class AwsAuthServer {
    /** One IAM identity: its secret and, for temporary credentials, the session token it must send. */
    class Identity(val secretAccessKey: String, val sessionToken: String?)

    private class Conversation(val serverNonce: ByteArray)

    private val identities = ConcurrentHashMap<String, Identity>()
    private val conversations = ConcurrentHashMap<Pair<Int, Int>, Conversation>()
    private val ids = AtomicInteger()
    private val random = SecureRandom()

    /** Counters and authenticated connections. */
    val gate: AuthGate = AuthGate(setOf("saslStart", "saslContinue"))

    /** The access key ids of the requests received, in order. */
    val accessKeyIds: MutableList<String> = CopyOnWriteArrayList()

    /** The STS host sent in the server-first message. */
    @Volatile var stsHost: String = "sts.amazonaws.com"

    /** Replaces the server nonce (the client must refuse a bad one); receives the client nonce. */
    @Volatile var serverNonce: (ByteArray) -> ByteArray = { client -> client + ByteArray(32).also { random.nextBytes(it) } }

    /** Adds the identity [accessKeyId]. */
    fun addIdentity(accessKeyId: String, secretAccessKey: String, sessionToken: String? = null) {
        identities[accessKeyId] = Identity(secretAccessKey, sessionToken)
    }

    /** Installs this mechanism on [server], in front of its current handler. */
    fun install(server: WireServer) {
        server.handler = gate.handler(server.handler) { ctx, db, cmd -> answer(ctx, db, cmd) }
    }

    private fun answer(ctx: RequestContext, db: String, cmd: BsonDocument): BsonDocument {
        val payload = AuthGate.payload(cmd) ?: return WireServer.error(2, "BadValue", "SASL command without payload")
        val doc = try {
            RawBsonDocument(payload).decode(BsonDocumentCodec())
        } catch (e: RuntimeException) {
            return gate.refused("MONGODB-AWS payload is not BSON")
        }
        return if (ctx.commandName == "saslStart") first(ctx, db, cmd, doc) else second(ctx, cmd, doc)
    }

    private fun first(ctx: RequestContext, db: String, cmd: BsonDocument, doc: BsonDocument): BsonDocument {
        val mechanism = cmd["mechanism"]?.takeIf { it.isString }?.asString()?.value
        if (mechanism != "MONGODB-AWS") return WireServer.error(2, "BadValue", "Received authentication for mechanism $mechanism which is not enabled")
        if (db != "\$external") return gate.refused("MONGODB-AWS must use the \$external database")
        val clientNonce = (doc["r"] as? BsonBinary)?.data
        if (clientNonce == null || clientNonce.size != 32) return gate.refused("client nonce must be 32 bytes")
        if (doc["p"]?.takeIf { it.isInt32 }?.asInt32()?.value != 'n'.code) return gate.refused("gs2-cb-flag must be 'n'")
        val nonce = serverNonce(clientNonce)
        val id = ids.incrementAndGet()
        conversations[ctx.connectionNumber to id] = Conversation(nonce)
        val reply = BsonDocument("s", BsonBinary(nonce)).append("h", BsonString(stsHost))
        return BsonDocument("conversationId", BsonInt32(id)).append("done", BsonBoolean.FALSE)
            .append("payload", BsonBinary(bson(reply))).append("ok", BsonInt32(1))
    }

    private fun second(ctx: RequestContext, cmd: BsonDocument, doc: BsonDocument): BsonDocument {
        val id = cmd["conversationId"]?.takeIf { it.isNumber }?.asNumber()?.intValue()
        val conv = id?.let { conversations.remove(ctx.connectionNumber to it) }
            ?: return WireServer.error(17, "ProtocolError", "No SASL session state found")
        val authorization = doc["a"]?.takeIf { it.isString }?.asString()?.value ?: return gate.refused("missing authorization header")
        val date = doc["d"]?.takeIf { it.isString }?.asString()?.value ?: return gate.refused("missing X-Amz-Date")
        val token = doc["t"]?.takeIf { it.isString }?.asString()?.value
        val match = HEADER.matchEntire(authorization) ?: return gate.refused("malformed authorization header")
        val (accessKeyId, day, region, service, signedHeaders, signature) = match.destructured
        accessKeyIds.add(accessKeyId)
        val identity = identities[accessKeyId] ?: return gate.refused("unknown access key id")
        if (identity.sessionToken != token) return gate.refused("the security token does not match")
        if (service != "sts" || day != date.take(8)) return gate.refused("wrong credential scope")
        if (region != expectedRegion(stsHost)) return gate.refused("wrong region $region for host $stsHost")
        val headers = sortedMapOf(
            "content-length" to "43",
            "content-type" to "application/x-www-form-urlencoded",
            "host" to stsHost,
            "x-amz-date" to date,
            "x-mongodb-gs2-cb-flag" to "n",
            "x-mongodb-server-nonce" to Base64.getEncoder().encodeToString(conv.serverNonce),
        )
        if (token != null) headers["x-amz-security-token"] = token
        if (signedHeaders != headers.keys.joinToString(";")) return gate.refused("wrong SignedHeaders $signedHeaders")
        val canonical = "POST\n/\n\n" + headers.entries.joinToString("") { "${it.key}:${it.value}\n" } + "\n" +
            headers.keys.joinToString(";") + "\n" + hex(sha256(BODY.toByteArray()))
        val toSign = "AWS4-HMAC-SHA256\n$date\n$day/$region/$service/aws4_request\n${hex(sha256(canonical.toByteArray()))}"
        var key = hmac("AWS4${identity.secretAccessKey}".toByteArray(), day)
        for (part in listOf(region, service, "aws4_request")) key = hmac(key, part)
        if (!MessageDigest.isEqual(hex(hmac(key, toSign)).toByteArray(), signature.toByteArray())) {
            return gate.refused("The request signature we calculated does not match the signature you provided.")
        }
        gate.succeeded(ctx.connectionNumber, accessKeyId)
        return BsonDocument("conversationId", BsonInt32(id)).append("done", BsonBoolean.TRUE)
            .append("payload", BsonBinary(ByteArray(0))).append("ok", BsonInt32(1))
    }

    private fun expectedRegion(host: String): String {
        val labels = host.split('.')
        return if (host == "sts.amazonaws.com" || labels.size < 2) "us-east-1" else labels[1]
    }

    private fun bson(doc: BsonDocument): ByteArray {
        val out = BasicOutputBuffer()
        BsonDocumentCodec().encode(BsonBinaryWriter(out), doc, EncoderContext.builder().build())
        return out.toByteArray()
    }

    private fun sha256(b: ByteArray) = MessageDigest.getInstance("SHA-256").digest(b)

    private fun hmac(key: ByteArray, s: String): ByteArray = Mac.getInstance("HmacSHA256").run {
        init(SecretKeySpec(key, "HmacSHA256"))
        doFinal(s.toByteArray())
    }

    private fun hex(b: ByteArray) = b.joinToString("") { "%02x".format(it) }

    private companion object {
        const val BODY = "Action=GetCallerIdentity&Version=2011-06-15"
        val HEADER = Regex(
            "AWS4-HMAC-SHA256 Credential=([^/]+)/(\\d{8})/([^/]+)/([^/]+)/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})",
        )
    }
}
