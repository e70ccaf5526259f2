package dev.mooring.cmap.internal.auth

import dev.mooring.cmap.internal.auth.aws.AwsConversation
import dev.mooring.cmap.internal.auth.aws.AwsCredentials
import dev.mooring.cmap.internal.auth.aws.SigV4
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.string.shouldNotContain
import io.kotest.matchers.string.shouldStartWith
import org.bson.BsonBinary
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString
import org.bson.RawBsonDocument
import org.bson.codecs.BsonDocumentCodec
import java.time.Instant
import java.time.ZoneOffset
import java.time.ZonedDateTime

/** SigV4 against AWS's published examples, and the MONGODB-AWS messages and checks of auth.md. */
class AwsSigningSpec : FunSpec({
    val docSecret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"

    test("SigV4: the IAM ListUsers example of AWS's documentation (quoted in auth.md) gives its Authorization header") {
        val r = SigV4.Request(
            "GET", "/", "Action=ListUsers&Version=2010-05-08",
            mapOf("Content-Type" to "application/x-www-form-urlencoded; charset=utf-8", "Host" to "iam.amazonaws.com", "X-Amz-Date" to "20150830T123600Z"),
            ByteArray(0), "us-east-1", "iam", "20150830T123600Z",
        )
        SigV4.hex(SigV4.sha256(SigV4.canonicalRequest(r).toByteArray())) shouldBe "f536975d06c0309214f805bb90ccff089219ecd68b2577efef23edd43b7e1a59"
        SigV4.authorization(r, "AKIDEXAMPLE", docSecret) shouldBe
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, SignedHeaders=content-type;host;x-amz-date, " +
            "Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7"
    }

    test("SigV4: the get-vanilla case of AWS's Signature Version 4 test suite") {
        val r = SigV4.Request(
            "GET", "/", "", mapOf("Host" to "example.amazonaws.com", "X-Amz-Date" to "20150830T123600Z"),
            ByteArray(0), "us-east-1", "service", "20150830T123600Z",
        )
        SigV4.authorization(r, "AKIDEXAMPLE", docSecret) shouldBe
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, " +
            "Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"
    }

    test("region calculation: auth.md's table") {
        AwsConversation.region("sts.amazonaws.com") shouldBe "us-east-1"
        AwsConversation.region("sts.us-west-2.amazonaws.com") shouldBe "us-west-2"
        AwsConversation.region("sts.us-west-2.amazonaws.com.ch") shouldBe "us-west-2"
        AwsConversation.region("example.com") shouldBe "com"
        AwsConversation.region("localhost") shouldBe "us-east-1"
        for (bad in listOf("sts..com", ".amazonaws.com", "sts.amazonaws.", "", "a".repeat(256))) {
            shouldThrow<AuthFailure> { AwsConversation.region(bad) }
        }
    }

    fun decode(bytes: ByteArray): BsonDocument = RawBsonDocument(bytes).decode(BsonDocumentCodec())

    fun serverFirst(nonce: ByteArray, host: String = "sts.amazonaws.com"): ByteArray {
        val out = org.bson.io.BasicOutputBuffer()
        BsonDocumentCodec().encode(
            org.bson.BsonBinaryWriter(out),
            BsonDocument("s", BsonBinary(nonce)).append("h", BsonString(host)),
            org.bson.codecs.EncoderContext.builder().build(),
        )
        return out.toByteArray()
    }

    val clientNonce = ByteArray(32) { it.toByte() }
    val now = ZonedDateTime.of(2019, 11, 7, 0, 26, 7, 0, ZoneOffset.UTC)

    test("client-first: a 32-byte nonce and gs2-cb-flag 110") {
        val first = decode(AwsConversation(clientNonce).clientFirst)
        (first["r"] as BsonBinary).data shouldBe clientNonce
        (first["r"] as BsonBinary).type shouldBe 0.toByte()
        first["p"] shouldBe BsonInt32(110)
        (decode(AwsConversation().clientFirst)["r"] as BsonBinary).data.size shouldBe 32
    }

    test("client-second: authorization and date; the security token only with temporary credentials") {
        val serverNonce = clientNonce + ByteArray(32) { (100 + it).toByte() }
        val permanent = decode(AwsConversation(clientNonce).clientSecond(serverFirst(serverNonce), AwsCredentials("AKIDEXAMPLE", docSecret, null), now))
        permanent["d"] shouldBe BsonString("20191107T002607Z")
        permanent.containsKey("t") shouldBe false
        val auth = permanent.getString("a").value
        auth shouldStartWith "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20191107/us-east-1/sts/aws4_request, " +
            "SignedHeaders=content-length;content-type;host;x-amz-date;x-mongodb-gs2-cb-flag;x-mongodb-server-nonce, Signature="
        val temporary = decode(AwsConversation(clientNonce).clientSecond(serverFirst(serverNonce, "sts.eu-west-1.amazonaws.com"), AwsCredentials("ASIAEXAMPLE", docSecret, "the-token"), now))
        temporary["t"] shouldBe BsonString("the-token")
        temporary.getString("a").value shouldContain "/eu-west-1/sts/aws4_request, SignedHeaders=content-length;content-type;host;x-amz-date;" +
            "x-amz-security-token;x-mongodb-gs2-cb-flag;x-mongodb-server-nonce,"
        temporary.getString("a").value shouldNotContain docSecret
    }

    test("the server nonce must be 64 bytes starting with the client nonce; the host must be valid") {
        val creds = AwsCredentials("AKIDEXAMPLE", docSecret, null)
        shouldThrow<AuthFailure> { AwsConversation(clientNonce).clientSecond(serverFirst(clientNonce + ByteArray(31)), creds, now) }
            .message!! shouldContain "63 bytes"
        shouldThrow<AuthFailure> { AwsConversation(clientNonce).clientSecond(serverFirst(ByteArray(64)), creds, now) }
            .message!! shouldContain "client nonce"
        shouldThrow<AuthFailure> { AwsConversation(clientNonce).clientSecond(serverFirst(clientNonce + ByteArray(32), "sts..amazonaws.com"), creds, now) }
            .message!! shouldContain "empty label"
    }

    test("credentials hide the secret and the token, and are fresh until five minutes before they expire") {
        val c = AwsCredentials("ASIAEXAMPLE", docSecret, "tok3n-value", Instant.parse("2030-01-01T00:00:00Z"))
        c.toString() shouldNotContain docSecret
        c.toString() shouldNotContain "tok3n-value"
        c.isFresh(Instant.parse("2029-12-31T23:54:59Z")) shouldBe true
        c.isFresh(Instant.parse("2029-12-31T23:55:00Z")) shouldBe false
        AwsCredentials("AKID", "s", null).isFresh(Instant.now()) shouldBe true
    }
})
