package dev.mooring.sdam

import dev.mooring.cmap.MongoCommandException
import dev.mooring.cmap.MongoNetworkException
import dev.mooring.cmap.MongoNetworkTimeoutException
import dev.mooring.events.ServerAddress
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.nulls.shouldBeNull
import io.kotest.matchers.nulls.shouldNotBeNull
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import org.bson.BsonDocument
import org.bson.types.ObjectId

class ErrorHandlingSpec : FunSpec({
    val a = ServerAddress("a")
    val settings = TopologySettings(listOf(a), replicaSetName = "rs")
    val pid = ObjectId("000000000000000000000001")
    val withPrimary = TopologyStateMachine.onServerDescription(
        TopologyStateMachine.open(settings).description,
        ServerDescription.fromHello(
            a,
            BsonDocument.parse("{ok: 1, isWritablePrimary: true, setName: 'rs', hosts: ['a:27017'], maxWireVersion: 21, topologyVersion: {processId: {\$oid: '${pid.toHexString()}'}, counter: {\$numberLong: '1'}}}"),
        ),
        settings,
    ).description

    fun command(json: String, generation: Int? = 0, handshake: Boolean = true) =
        ApplicationError.fromCommandResponse(a, BsonDocument.parse(json), generation, handshake)

    fun handle(e: ApplicationError, poolGeneration: Int = 0) = ErrorHandling.onApplicationError(withPrimary, e, poolGeneration, settings)

    test("the code decides, the message is used only when there is no code") {
        ErrorHandling.isStateChangeError(10107, null) shouldBe true
        ErrorHandling.isStateChangeError(1, "not master") shouldBe false
        ErrorHandling.isStateChangeError(null, "not master") shouldBe true
        ErrorHandling.isStateChangeError(null, "node is recovering") shouldBe true
        ErrorHandling.isStateChangeError(null, "not master or secondary") shouldBe true
        ErrorHandling.isStateChangeError(null, "some other failure") shouldBe false
        ErrorHandling.isShutdownError(91) shouldBe true
        ErrorHandling.isShutdownError(189) shouldBe false
    }

    test("NotWritablePrimary marks the server Unknown with the error's topologyVersion, requests a check, keeps the pool") {
        val u = handle(command("{ok: 0, code: 10107, errmsg: 'x', topologyVersion: {processId: {\$oid: '${pid.toHexString()}'}, counter: {\$numberLong: '2'}}}")!!)
        u.description.type shouldBe TopologyType.REPLICA_SET_NO_PRIMARY
        val sd = u.description.servers.getValue(a)
        sd.type shouldBe ServerType.UNKNOWN
        sd.topologyVersion shouldBe TopologyVersion(pid, 2)
        sd.error!! shouldContain "10107"
        u.actions shouldContainExactly listOf(TopologyAction.RequestImmediateCheck(a))
    }

    test("shutdown codes clear the pool as well") {
        val u = handle(command("{ok: 0, code: 91, errmsg: 'shutting down'}")!!)
        u.actions shouldContainExactly listOf(TopologyAction.ClearPool(a), TopologyAction.RequestImmediateCheck(a))
    }

    test("a state change error whose topologyVersion is not newer is stale") {
        handle(command("{ok: 0, code: 10107, topologyVersion: {processId: {\$oid: '${pid.toHexString()}'}, counter: {\$numberLong: '1'}}}")!!).ignored shouldBe true
    }

    test("an error from an older pool generation is stale") {
        handle(ApplicationError(a, ApplicationErrorKind.NETWORK, generation = 0), poolGeneration = 1).ignored shouldBe true
    }

    test("writeConcernError is checked, writeErrors are not") {
        val wce = command("{ok: 1, writeConcernError: {code: 91, errmsg: 'Replication is being shut down'}}").shouldNotBeNull()
        wce.code shouldBe 91
        handle(wce).description.servers.getValue(a).type shouldBe ServerType.UNKNOWN
        command("{ok: 1, writeErrors: [{index: 0, code: 10107, errmsg: 'not master'}]}").shouldBeNull()
        command("{ok: 1}").shouldBeNull()
    }

    test("a network error after the handshake marks Unknown, clears the pool and cancels the check") {
        val u = handle(ApplicationError(a, ApplicationErrorKind.NETWORK, message = "reset", generation = 0))
        u.description.servers.getValue(a).type shouldBe ServerType.UNKNOWN
        u.actions shouldContainExactly listOf(TopologyAction.ClearPool(a), TopologyAction.CancelCheck(a))
    }

    test("a network timeout after the handshake changes nothing") {
        handle(ApplicationError(a, ApplicationErrorKind.NETWORK_TIMEOUT, generation = 0)).ignored shouldBe true
    }

    test("before the handshake: overload-labelled errors are ignored, others (auth) mark Unknown and clear") {
        handle(
            ApplicationError(a, ApplicationErrorKind.NETWORK_TIMEOUT, generation = 0, handshakeCompleted = false, errorLabels = setOf("SystemOverloadedError")),
        ).ignored shouldBe true
        val auth = handle(ApplicationError(a, ApplicationErrorKind.OTHER, message = "auth failed", generation = 0, handshakeCompleted = false))
        auth.description.servers.getValue(a).type shouldBe ServerType.UNKNOWN
        auth.actions shouldContainExactly listOf(TopologyAction.ClearPool(a), TopologyAction.CancelCheck(a))
    }

    test("an ordinary command error changes nothing") {
        handle(command("{ok: 0, code: 11000, errmsg: 'duplicate key'}")!!).ignored shouldBe true
    }

    test("load-balanced mode never marks the load balancer Unknown and clears only the service") {
        val lbSettings = TopologySettings(listOf(a), loadBalanced = true)
        val lb = TopologyStateMachine.open(lbSettings).description
        val service = ObjectId()
        val u = ErrorHandling.onApplicationError(lb, ApplicationError(a, ApplicationErrorKind.NETWORK, generation = 0, serviceId = service), 0, lbSettings)
        u.description shouldBe lb
        u.actions shouldContainExactly listOf(TopologyAction.ClearPool(a, service))
        PoolGenerations().apply(u.actions).generation(a, service) shouldBe 1
        val shutdown = ErrorHandling.onApplicationError(
            lb,
            ApplicationError(a, ApplicationErrorKind.COMMAND, code = 11600, generation = 0, serviceId = service),
            0,
            lbSettings,
        )
        shutdown.description.servers.getValue(a).type shouldBe ServerType.LOAD_BALANCER
        shutdown.actions shouldContainExactly listOf(TopologyAction.ClearPool(a, service))
    }

    test("the adapter reads the cmap exception types") {
        val timeout = ApplicationError.fromException(MongoNetworkTimeoutException("t", a, generation = 3, handshakeCompleted = false), a)!!
        timeout.kind shouldBe ApplicationErrorKind.NETWORK_TIMEOUT
        timeout.generation shouldBe 3
        timeout.handshakeCompleted shouldBe false
        val net = MongoNetworkException("n", a, generation = 1).apply { addErrorLabel("SystemOverloadedError") }
        ApplicationError.fromException(net, a)!!.errorLabels shouldBe setOf("SystemOverloadedError")
        val cmd = ApplicationError.fromException(MongoCommandException(BsonDocument.parse("{ok: 0, code: 189, errmsg: 'stepped down'}"), a, 2), a)!!
        cmd.kind shouldBe ApplicationErrorKind.COMMAND
        cmd.code shouldBe 189
        cmd.generation shouldBe 2
        ApplicationError.fromException(IllegalStateException("x"), a)!!.kind shouldBe ApplicationErrorKind.OTHER
    }

    test("pool generations count clears per server and restart at 0 for a server that left") {
        var g = PoolGenerations()
        g = g.apply(listOf(TopologyAction.ClearPool(a), TopologyAction.ClearPool(a)))
        g.generation(a) shouldBe 2
        g.apply(listOf(TopologyAction.StopMonitoring(a))).generation(a) shouldBe 0
    }
})
