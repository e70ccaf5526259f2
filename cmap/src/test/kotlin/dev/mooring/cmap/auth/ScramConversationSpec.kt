package dev.mooring.cmap.auth

import dev.mooring.cmap.internal.auth.ScramConversation
import dev.mooring.cmap.internal.auth.ScramFailure
import dev.mooring.cmap.internal.auth.ScramKind
import dev.mooring.cmap.internal.auth.ScramPassword
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.string.shouldNotContain

/** The client side of SCRAM against the conversations printed in auth.md, and its failure modes. */
class ScramConversationSpec : FunSpec({
    val sha1ServerFirst = "r=fyko+d2lbbFgONRv9qkxdawLHo+Vgk7qvUOKUwuWLIWg4l/9SraGMHEE,s=rQ9ZY3MntBeuP3E1TDVC4w==,i=10000"
    val sha256ServerFirst = "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF\$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"

    test("SCRAM-SHA-1 reproduces auth.md's conversation (MongoDB password digest, no SASLprep)") {
        val c = ScramConversation(ScramKind.SHA_1, "user", "pencil".toCharArray(), nonce = "fyko+d2lbbFgONRv9qkxdawL")
        String(c.clientFirst) shouldBe "n,,n=user,r=fyko+d2lbbFgONRv9qkxdawL"
        String(c.clientFinal(sha1ServerFirst.toByteArray())) shouldBe
            "c=biws,r=fyko+d2lbbFgONRv9qkxdawLHo+Vgk7qvUOKUwuWLIWg4l/9SraGMHEE,p=MC2T8BvbmWRckDw8oWl5IVghwCY="
        c.verifyServerFinal("v=UMWeI25JD1yNYZRMpZ4VHvhZ9e0=".toByteArray())
    }

    test("SCRAM-SHA-256 reproduces auth.md's conversation") {
        val c = ScramConversation(ScramKind.SHA_256, "user", "pencil".toCharArray(), nonce = "rOprNGfwEbeRWgbNEkqO")
        String(c.clientFirst) shouldBe "n,,n=user,r=rOprNGfwEbeRWgbNEkqO"
        String(c.clientFinal(sha256ServerFirst.toByteArray())) shouldBe
            "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF\$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
        c.verifyServerFinal("v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=".toByteArray())
    }

    test("a server signature that does not match is rejected") {
        val c = ScramConversation(ScramKind.SHA_256, "user", "pencil".toCharArray(), nonce = "rOprNGfwEbeRWgbNEkqO")
        c.clientFinal(sha256ServerFirst.toByteArray())
        val e = shouldThrow<ScramFailure> { c.verifyServerFinal("v=AAAATRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=".toByteArray()) }
        e.message shouldContain "server signature"
    }

    test("a server error in the final message is reported") {
        val c = ScramConversation(ScramKind.SHA_256, "user", "pencil".toCharArray(), nonce = "rOprNGfwEbeRWgbNEkqO")
        c.clientFinal(sha256ServerFirst.toByteArray())
        shouldThrow<ScramFailure> { c.verifyServerFinal("e=invalid-proof".toByteArray()) }
    }

    test("fewer than 4096 iterations is refused (downgrade protection)") {
        val c = ScramConversation(ScramKind.SHA_256, "user", "pencil".toCharArray(), nonce = "rOprNGfwEbeRWgbNEkqO")
        val e = shouldThrow<ScramFailure> { c.clientFinal(sha256ServerFirst.replace("i=4096", "i=4095").toByteArray()) }
        e.message shouldContain "4095"
    }

    test("a server nonce that does not extend the client nonce is refused") {
        val c = ScramConversation(ScramKind.SHA_256, "user", "pencil".toCharArray(), nonce = "rOprNGfwEbeRWgbNEkqO")
        shouldThrow<ScramFailure> { c.clientFinal("r=somethingElse,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096".toByteArray()) }
    }

    test("user names are escaped but never SASLprep'd") {
        val c = ScramConversation(ScramKind.SHA_256, "a=b,c\u2168", "pencil".toCharArray(), nonce = "abc")
        String(c.clientFirst, Charsets.UTF_8) shouldBe "n,,n=a=3Db=2Cc\u2168,r=abc"
    }

    test("SASLprep for SCRAM-SHA-256 passwords: auth.md's IX cases") {
        String(ScramPassword.prepare(ScramKind.SHA_256, "IX", "IX".toCharArray())) shouldBe "IX"
        String(ScramPassword.prepare(ScramKind.SHA_256, "IX", "I\u00ADX".toCharArray())) shouldBe "IX"
        String(ScramPassword.prepare(ScramKind.SHA_256, "\u2168", "\u2163".toCharArray())) shouldBe "IV"
        String(ScramPassword.prepare(ScramKind.SHA_256, "\u2168", "\u2168".toCharArray())) shouldBe "IX"
        // non-ASCII space maps to a space
        String(ScramPassword.prepare(ScramKind.SHA_256, "u", "a\u00A0b".toCharArray())) shouldBe "a b"
    }

    test("a password SASLprep prohibits fails without echoing it") {
        val e = shouldThrow<IllegalArgumentException> { ScramPassword.prepare(ScramKind.SHA_256, "u", "se\u0007cret".toCharArray()) }
        e.message!! shouldNotContain "se\u0007cret"
        e.message!! shouldContain "SASLprep"
    }

    test("SCRAM-SHA-1 digests the password as hex MD5 of user:mongo:password, without SASLprep") {
        String(ScramPassword.prepare(ScramKind.SHA_1, "user", "pencil".toCharArray())) shouldBe "1c33006ec1ffd90f9cadcbcc0e118200"
        // SASLprep would map U+00AD away; SCRAM-SHA-1 must not
        String(ScramPassword.prepare(ScramKind.SHA_1, "u", "I\u00ADX".toCharArray())) shouldNotContain "IX"
    }

    test("default mechanism negotiation follows saslSupportedMechs") {
        ScramKind.negotiate(listOf("SCRAM-SHA-1", "SCRAM-SHA-256")) shouldBe ScramKind.SHA_256
        ScramKind.negotiate(listOf("SCRAM-SHA-1")) shouldBe ScramKind.SHA_1
        ScramKind.negotiate(listOf("PLAIN", "UNKNOWN-MECH")) shouldBe ScramKind.SHA_1
        ScramKind.negotiate(emptyList()) shouldBe ScramKind.SHA_1
        ScramKind.negotiate(null) shouldBe ScramKind.SHA_1
    }
})
