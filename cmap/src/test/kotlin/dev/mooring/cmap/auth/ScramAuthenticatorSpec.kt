package dev.mooring.cmap.auth

import dev.mooring.cmap.Connection
import dev.mooring.cmap.ConnectionDescription
import dev.mooring.cmap.MongoAuthenticationException
import dev.mooring.cmap.MongoCommandException
import dev.mooring.cmap.MongoCredential
import dev.mooring.cmap.internal.auth.ScramAuthenticator
import dev.mooring.events.ServerAddress
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import org.bson.BsonArray
import org.bson.BsonBinary
import org.bson.BsonBoolean
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString

/** The SASL conversation of [ScramAuthenticator] against scripted replies: what it sends and how it fails. */
class ScramAuthenticatorSpec : FunSpec({
    val address = ServerAddress("db.example", 27017)

    class Scripted(val replies: ArrayDeque<(BsonDocument) -> BsonDocument>) : Connection {
        val sent = ArrayList<Pair<String, BsonDocument>>()
        override val address = ServerAddress("db.example", 27017)
        override val id = 1L
        override val generation = 4
        override val description: ConnectionDescription? = null
        override val isClosed = false
        override suspend fun command(database: String, command: BsonDocument): BsonDocument {
            sent.add(database to command)
            val r = replies.removeFirst()(command)
            if (r["ok"]?.asNumber()?.intValue() != 1) throw MongoCommandException(r, address, generation, false)
            return r
        }
        override fun close() = Unit
    }

    fun description(hello: BsonDocument) = ConnectionDescription(address, hello, 0, 21, 1, 1, 1, null, null, true, null)

    fun reply(vararg pairs: Pair<String, org.bson.BsonValue>) = BsonDocument().also { d -> pairs.forEach { d[it.first] = it.second } }.append("ok", BsonInt32(1))

    fun serverFirstFor(cmd: BsonDocument): BsonDocument {
        val clientFirst = String(cmd.getBinary("payload").data)
        val nonce = clientFirst.substringAfter("r=")
        return reply("conversationId" to BsonInt32(1), "done" to BsonBoolean.FALSE,
            "payload" to BsonBinary("r=${nonce}SERVER,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096".toByteArray()))
    }

    val cred = MongoCredential(null, "user", "admin", "pencil".toCharArray())

    test("the standard conversation uses the negotiated mechanism, autoAuthorize and skipEmptyExchange, on the auth source") {
        val c = Scripted(ArrayDeque(listOf({ cmd -> serverFirstFor(cmd) }, { _ -> BsonDocument("ok", BsonInt32(0)).append("code", BsonInt32(18)).append("errmsg", BsonString("Authentication failed.")) })))
        val hello = BsonDocument("saslSupportedMechs", BsonArray(listOf(BsonString("SCRAM-SHA-1"))))
        val e = shouldThrow<MongoAuthenticationException> { ScramAuthenticator(cred).authenticate(c, description(hello), null) }
        e.serverCode shouldBe 18
        e.generation shouldBe 4
        val (db, start) = c.sent.first()
        db shouldBe "admin"
        start["mechanism"] shouldBe BsonString("SCRAM-SHA-1")
        start["autoAuthorize"] shouldBe BsonInt32(1)
        start.getDocument("options")["skipEmptyExchange"] shouldBe BsonBoolean.TRUE
        c.sent[1].second["conversationId"] shouldBe BsonInt32(1)
    }

    test("a server that ends the conversation before proving it knows the password is rejected") {
        val c = Scripted(ArrayDeque(listOf({ _ -> reply("conversationId" to BsonInt32(1), "done" to BsonBoolean.TRUE, "payload" to BsonBinary(ByteArray(0))) })))
        shouldThrow<MongoAuthenticationException> { ScramAuthenticator(cred).authenticate(c, description(BsonDocument()), null) }
            .message!! shouldContain "before proving"
    }

    test("a final reply without a server signature is rejected even when done is true") {
        val c = Scripted(ArrayDeque(listOf({ cmd -> serverFirstFor(cmd) }, { _ -> reply("conversationId" to BsonInt32(1), "done" to BsonBoolean.TRUE, "payload" to BsonBinary(ByteArray(0))) })))
        shouldThrow<MongoAuthenticationException> { ScramAuthenticator(cred).authenticate(c, description(BsonDocument()), null) }
            .message!! shouldContain "server signature"
    }

    test("a speculative start the server answered continues with saslContinue only") {
        val auth = ScramAuthenticator(cred)
        val (conversation, doc) = auth.speculativeStart()!!
        doc["mechanism"] shouldBe BsonString("SCRAM-SHA-256")
        doc["db"] shouldBe BsonString("admin")
        doc.containsKey("autoAuthorize") shouldBe false
        val hello = BsonDocument("speculativeAuthenticate", serverFirstFor(doc).apply { remove("ok") })
        val c = Scripted(ArrayDeque(listOf({ _ -> reply("conversationId" to BsonInt32(1), "done" to BsonBoolean.TRUE, "payload" to BsonBinary("v=AAAA".toByteArray())) })))
        shouldThrow<MongoAuthenticationException> { auth.authenticate(c, description(hello), conversation) }.message!! shouldContain "server signature"
        c.sent.map { it.second.keys.first() } shouldBe listOf("saslContinue")
    }
})
