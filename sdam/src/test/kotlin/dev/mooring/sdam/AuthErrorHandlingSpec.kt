package dev.mooring.sdam

import dev.mooring.cmap.MongoAuthenticationException
import dev.mooring.cmap.MongoTlsException
import dev.mooring.events.ServerAddress
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContain
import io.kotest.matchers.shouldBe
import org.bson.BsonDocument

/** The SDAM rule for authentication and TLS failures during connection establishment, fed with the cmap error types. */
class AuthErrorHandlingSpec : FunSpec({
    val a = ServerAddress("a")
    val settings = TopologySettings(listOf(a), replicaSetName = "rs")
    val withPrimary = TopologyStateMachine.onServerDescription(
        TopologyStateMachine.open(settings).description,
        ServerDescription.fromHello(a, BsonDocument.parse("{ok: 1, isWritablePrimary: true, setName: 'rs', hosts: ['a:27017'], maxWireVersion: 21}")),
        settings,
    ).description

    test("an authentication failure marks the server Unknown and clears its pool") {
        val e = MongoAuthenticationException("Authentication failed", a, generation = 2, serverCode = 18)
        val error = ApplicationError.fromException(e, a)!!
        error.handshakeCompleted shouldBe false
        error.generation shouldBe 2
        val u = ErrorHandling.onApplicationError(withPrimary, error, 2, settings)
        u.description.servers.getValue(a).type shouldBe ServerType.UNKNOWN
        u.actions shouldContain TopologyAction.ClearPool(a)
    }

    test("an authentication failure from an older pool generation is stale and ignored") {
        val e = MongoAuthenticationException("Authentication failed", a, generation = 1, serverCode = 18)
        ErrorHandling.onApplicationError(withPrimary, ApplicationError.fromException(e, a)!!, 2, settings).ignored shouldBe true
    }

    test("a TLS handshake failure is a network error: Unknown and pool cleared") {
        val error = ApplicationError.fromException(MongoTlsException("certificate not trusted", a, generation = 0), a)!!
        error.kind shouldBe ApplicationErrorKind.NETWORK
        val u = ErrorHandling.onApplicationError(withPrimary, error, 0, settings)
        u.description.servers.getValue(a).type shouldBe ServerType.UNKNOWN
        u.actions shouldContain TopologyAction.ClearPool(a)
    }
})
