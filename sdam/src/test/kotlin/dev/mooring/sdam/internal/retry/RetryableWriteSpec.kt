package dev.mooring.sdam.internal.retry

import dev.mooring.cmap.MongoAuthenticationException
import dev.mooring.cmap.MongoCommandException
import dev.mooring.cmap.MongoIncompatibleServerException
import dev.mooring.cmap.MongoNetworkException
import dev.mooring.cmap.PoolClearedException
import dev.mooring.events.ServerAddress
import dev.mooring.sdam.MongoServerSelectionTimeoutException
import dev.mooring.sdam.ServerDescription
import dev.mooring.sdam.TopologyDescription
import dev.mooring.sdam.TopologyType
import dev.mooring.sdam.internal.session.ServerSessionPool
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.types.shouldBeSameInstanceAs
import kotlinx.coroutines.CancellationException
import org.bson.BsonDocument
import org.bson.BsonInt64

/** The retryable write rules as [RetryableWrite] applies them, without a server. */
class RetryableWriteSpec : FunSpec({
    val a = ServerAddress("a")
    val b = ServerAddress("b")
    fun hello(json: String, address: ServerAddress = a) = ServerDescription.fromHello(address, BsonDocument.parse(json))
    val primary = hello("{ok: 1, isWritablePrimary: true, setName: 'rs', hosts: ['a:27017', 'b:27017'], maxWireVersion: 21, logicalSessionTimeoutMinutes: 30}")
    val standalone = hello("{ok: 1, isWritablePrimary: true, maxWireVersion: 21, logicalSessionTimeoutMinutes: 30}")
    val noSessions = hello("{ok: 1, isWritablePrimary: true, setName: 'rs', hosts: ['a:27017'], maxWireVersion: 21}")
    val rs = TopologyDescription(TopologyType.REPLICA_SET_WITH_PRIMARY, mapOf(a to primary))
    val single = TopologyDescription(TopologyType.SINGLE, mapOf(a to standalone))
    val insert = BsonDocument.parse("{insert: 'c', documents: [{_id: 1}]}")
    fun network(address: ServerAddress = a) = MongoNetworkException("reset", address)
    fun command(json: String) = MongoCommandException(BsonDocument.parse(json), a)

    test("on a replica set primary both attempts carry the same lsid and txnNumber") {
        val write = RetryableWrite(insert, true, ServerSessionPool())
        val first = write.commandFor(primary, rs)
        val second = write.commandFor(primary, rs)
        first["lsid"] shouldBe second["lsid"]
        first["txnNumber"] shouldBe BsonInt64(1)
        second["txnNumber"] shouldBe BsonInt64(1)
        insert.containsKey("lsid") shouldBe false // the caller's document is not changed
    }

    test("a standalone, a server without sessions, retryWrites=false and w:0 get neither lsid nor txnNumber and no retry") {
        val cases = listOf(
            Triple(insert, true, standalone),
            Triple(insert, true, noSessions),
            Triple(insert, false, primary),
            Triple(BsonDocument.parse("{insert: 'c', documents: [], writeConcern: {w: 0}}"), true, primary),
        )
        for ((cmd, enabled, server) in cases) {
            val write = RetryableWrite(cmd, enabled, ServerSessionPool())
            val sent = write.commandFor(server, single)
            sent shouldBeSameInstanceAs cmd
            val e = network()
            write.onError(e, 21)
            write.shouldRetry(e) shouldBe false
            write.shouldRetry(PoolClearedException(a, "cleared")) shouldBe false
        }
    }

    test("network errors are labelled RetryableWriteError and retried; server errors only when labelled (4.4+) or with a retryable code (older)") {
        val write = RetryableWrite(insert, true, ServerSessionPool())
        write.commandFor(primary, rs)
        val net = network()
        write.onError(net, 21)
        net.hasErrorLabel(RetryableErrors.RETRYABLE_WRITE_ERROR) shouldBe true
        write.shouldRetry(net) shouldBe true

        val unlabelled = command("{ok: 0, code: 91, errmsg: 'shutting down'}")
        write.onError(unlabelled, 21)
        write.shouldRetry(unlabelled) shouldBe false // a 4.4+ server labels what is retryable
        val old = command("{ok: 0, code: 91, errmsg: 'shutting down'}")
        write.onError(old, 8)
        write.shouldRetry(old) shouldBe true
        val labelled = command("{ok: 0, code: 2, errmsg: 'x', errorLabels: ['RetryableWriteError']}")
        write.onError(labelled, 21)
        write.shouldRetry(labelled) shouldBe true
        val bad = command("{ok: 0, code: 2, errmsg: 'bad value'}")
        write.onError(bad, 8)
        write.shouldRetry(bad) shouldBe false
        write.shouldRetry(CancellationException("cancelled")) shouldBe false
    }

    test("an error checking out a connection (establishment, pool cleared) is judged against the server selected, not the topology before") {
        // the topology before selection may have the server Unknown (an earlier error): only the selected server counts
        val write = RetryableWrite(insert, true, ServerSessionPool())
        val establishing = MongoNetworkException("network error running saslContinue", a, handshakeCompleted = false)
        write.checkOutFailed(primary, establishing)
        establishing.hasErrorLabel(RetryableErrors.RETRYABLE_WRITE_ERROR) shouldBe true
        write.shouldRetry(establishing) shouldBe true
        val cleared = PoolClearedException(a, "cleared")
        write.checkOutFailed(primary, cleared)
        write.shouldRetry(cleared) shouldBe true
        // a server error in the handshake or authentication: retryable by its code, whatever the server's version
        val shutdown = MongoAuthenticationException("auth failed: server error 91", a, serverCode = 91)
        write.checkOutFailed(primary, shutdown)
        write.shouldRetry(shutdown) shouldBe true
        val helloError = MongoCommandException(BsonDocument.parse("{ok: 0, code: 91, errmsg: 'shutting down'}"), a, handshakeCompleted = false)
        write.checkOutFailed(primary, helloError)
        write.shouldRetry(helloError) shouldBe true
        val refused = MongoAuthenticationException("auth failed: server error 18", a, serverCode = 18)
        write.checkOutFailed(primary, refused)
        write.shouldRetry(refused) shouldBe false
        // a standalone, retryWrites=false and w:0 label nothing; a failed selection is not retried
        for ((w, server) in listOf(
            RetryableWrite(insert, true, ServerSessionPool()) to standalone,
            RetryableWrite(insert, false, ServerSessionPool()) to primary,
            RetryableWrite(BsonDocument.parse("{insert: 'c', documents: [], writeConcern: {w: 0}}"), true, ServerSessionPool()) to primary,
        )) {
            val e = network()
            w.checkOutFailed(server, e)
            w.shouldRetry(e) shouldBe false
        }
        write.shouldRetry(MongoServerSelectionTimeoutException("no server", TopologyDescription(TopologyType.UNKNOWN, emptyMap()), 30_000)) shouldBe false
    }

    test("which error is surfaced: the retry's, or the first after NoWritesPerformed, a failed selection or a server without support") {
        val write = RetryableWrite(insert, true, ServerSessionPool())
        val first = network()
        val second = command("{ok: 0, code: 91, errmsg: 'x', errorLabels: ['RetryableWriteError']}")
        write.surface(first, second) shouldBeSameInstanceAs second
        val noWrites = command("{ok: 0, code: 91, errmsg: 'x', errorLabels: ['RetryableWriteError', 'NoWritesPerformed']}")
        write.surface(first, noWrites) shouldBeSameInstanceAs first
        val selection = MongoServerSelectionTimeoutException("no server", TopologyDescription(TopologyType.UNKNOWN, emptyMap()), 30_000)
        write.surface(first, selection) shouldBeSameInstanceAs first
        write.surface(first, RetryNotPossible(b)) shouldBeSameInstanceAs first
        // an incompatible topology fails selection; an incompatible server met by a new connection's handshake does not
        write.surface(first, MongoIncompatibleServerException("old", b)) shouldBeSameInstanceAs first
        val handshake = MongoIncompatibleServerException("old", b, generation = 0)
        write.surface(first, handshake) shouldBeSameInstanceAs handshake
    }

    test("a retry that lands on a server without retryable writes is not possible") {
        val write = RetryableWrite(insert, true, ServerSessionPool())
        write.commandFor(primary, rs)
        shouldThrow<RetryNotPossible> { write.commandFor(noSessions, rs) }
    }

    test("a retryable write concern error is raised as RetryableWriteConcernReply; other replies pass") {
        val write = RetryableWrite(insert, true, ServerSessionPool())
        write.commandFor(primary, rs)
        val ok = BsonDocument.parse("{ok: 1, n: 1}")
        write.checkReply(ok, 21) shouldBeSameInstanceAs ok
        val labelled = BsonDocument.parse("{ok: 1, n: 1, writeConcernError: {code: 91, errmsg: 'x'}, errorLabels: ['RetryableWriteError']}")
        shouldThrow<RetryableWriteConcernReply> { write.checkReply(labelled, 21) }.reply shouldBeSameInstanceAs labelled
        val unlabelledNew = BsonDocument.parse("{ok: 1, n: 1, writeConcernError: {code: 91, errmsg: 'x'}}")
        write.checkReply(unlabelledNew, 21) shouldBeSameInstanceAs unlabelledNew
        // before 4.4 the driver labels a retryable write concern error itself
        val preFourFour = shouldThrow<RetryableWriteConcernReply> { write.checkReply(unlabelledNew, 8) }.reply
        preFourFour.getArray("errorLabels").map { it.asString().value } shouldBe listOf("RetryableWriteError")
        unlabelledNew.containsKey("errorLabels") shouldBe false
        val notRetryable = BsonDocument.parse("{ok: 1, n: 1, writeConcernError: {code: 100, errmsg: 'x'}}")
        write.checkReply(notRetryable, 8) shouldBeSameInstanceAs notRetryable
        // ... but never to a pre-4.4 mongos's writeConcernError (retryable-writes.md), which is returned as it is
        write.checkReply(unlabelledNew, 8, fromMongos = true) shouldBeSameInstanceAs unlabelledNew
        // a label the mongos set itself still counts
        shouldThrow<RetryableWriteConcernReply> { write.checkReply(labelled, 8, fromMongos = true) }
    }

    test("the session is returned on close, and discarded when a network error made it dirty") {
        val pool = ServerSessionPool()
        RetryableWrite(insert, true, pool).use { w -> w.commandFor(primary, rs) }
        pool.size shouldBe 1
        RetryableWrite(insert, true, pool).use { w ->
            w.commandFor(primary, rs)
            w.onError(network(), 21)
        }
        pool.size shouldBe 0
    }

    test("retryable reads: network, pool-cleared and retryable codes; nothing when retryReads is false") {
        val read = RetryableRead(true)
        read.shouldRetry(network()) shouldBe true
        read.shouldRetry(PoolClearedException(a, "cleared")) shouldBe true
        read.shouldRetry(command("{ok: 0, code: 134, errmsg: 'x'}")) shouldBe true
        read.shouldRetry(command("{ok: 0, code: 2, errmsg: 'x'}")) shouldBe false
        // the same codes from the handshake or authentication of the connection checked out
        read.shouldRetry(MongoAuthenticationException("auth failed: server error 91", a, serverCode = 91)) shouldBe true
        read.shouldRetry(MongoAuthenticationException("auth failed: server error 18", a, serverCode = 18)) shouldBe false
        read.shouldRetry(CancellationException("x")) shouldBe false
        RetryableRead(false).shouldRetry(network()) shouldBe false
        RetryableRead(false).shouldRetry(PoolClearedException(a, "cleared")) shouldBe false
        val sharded = TopologyDescription(TopologyType.SHARDED, emptyMap())
        read.deprioritize(network(), sharded) shouldBe setOf(a)
        read.deprioritize(network(), rs) shouldBe emptySet()
    }
})
