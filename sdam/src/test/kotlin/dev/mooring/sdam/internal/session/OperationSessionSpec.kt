package dev.mooring.sdam.internal.session

import dev.mooring.cmap.Connection
import dev.mooring.cmap.ConnectionDescription
import dev.mooring.cmap.MongoNetworkException
import dev.mooring.events.ServerAddress
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.CancellationException
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString

/** One operation's session (driver-sessions.md): which commands carry an lsid, last use, dirty sessions. */
class OperationSessionSpec : FunSpec({
    val minute = 60_000_000_000L

    /** A connection whose handshake reported [sessionTimeoutMinutes] (none: no session support); it sends nothing. */
    fun connection(sessionTimeoutMinutes: Int?): Connection {
        val hello = BsonDocument("ok", BsonInt32(1)).also { h -> sessionTimeoutMinutes?.let { h["logicalSessionTimeoutMinutes"] = BsonInt32(it) } }
        val address = ServerAddress.parse("a:27017")
        val description = ConnectionDescription(address, hello, 0, 21, 16 shl 20, 48_000_000, 100_000, null, null, true, null)
        return object : Connection {
            override val address = address
            override val id = 1L
            override val generation = 0
            override val description = description
            override val isClosed = false
            override suspend fun command(database: String, command: BsonDocument): BsonDocument = throw UnsupportedOperationException()
            override fun close() {}
        }
    }

    fun find() = BsonDocument("find", BsonInt32(1))

    test("an implicit session's lsid never goes to a connection without session support, even after one that has it") {
        val s = OperationSession(ServerSessionPool(), null, { 30 })
        s.attach(find(), connection(30)).containsKey("lsid") shouldBe true
        // a retry (or any later command of the operation) on a server that reports no logicalSessionTimeoutMinutes
        s.attach(find(), connection(null)).containsKey("lsid") shouldBe false
        s.attach(find(), connection(30)).containsKey("lsid") shouldBe true
    }

    test("session support is read from the handshake reply: logicalSessionTimeoutMinutes, when it is a number") {
        connection(30).description!!.logicalSessionTimeoutMinutes shouldBe 30
        connection(null).description!!.logicalSessionTimeoutMinutes shouldBe null
        val notANumber = connection(null).description!!.let {
            it.copy(helloReply = it.helloReply.clone().append("logicalSessionTimeoutMinutes", BsonString("30")))
        }
        notANumber.logicalSessionTimeoutMinutes shouldBe null
        OperationSession.supportsSessions(connection(30)) shouldBe true
        OperationSession.supportsSessions(connection(null)) shouldBe false
    }

    test("the last use is when the lsid was sent, not when the session went back: a session idle for too long is discarded") {
        var now = 0L
        val pool = ServerSessionPool { now }
        val s = OperationSession(pool, null, { 10 })
        now = minute
        s.attach(find(), connection(10)) // sent at minute 1
        now += 9 * minute + 1 // less than a minute left before minute 11, when the server times it out
        s.release()
        pool.size shouldBe 0
    }

    test("a session sent recently goes back to the pool and is reused") {
        var now = 0L
        val pool = ServerSessionPool { now }
        val s = OperationSession(pool, null, { 10 })
        val sent = s.attach(find(), connection(10))
        now += 5 * minute
        s.attach(find(), connection(10)) // used again at minute 5: 9 minutes left at release
        now += minute
        s.release()
        pool.size shouldBe 1
        OperationSession(pool, null, { 10 }).attach(find(), connection(10))["lsid"] shouldBe sent["lsid"]
    }

    test("a command interrupted in flight (network error, timeout, cancellation) makes the session dirty; a server error does not") {
        val pool = ServerSessionPool()
        val clean = ArrayList<BsonDocument>()
        for ((error, dirty) in listOf(
            MongoNetworkException("reset", ServerAddress.parse("a:27017")) to true,
            CancellationException("timeoutMS expired while the command was in flight") to true,
            IllegalStateException("not a network error") to false,
        )) {
            val s = OperationSession(pool, null, { 30 })
            val sent = s.attach(find(), connection(30))
            s.onError(error)
            s.current!!.isDirty shouldBe dirty
            if (!dirty) clean += sent.getDocument("lsid")
            s.release()
        }
        // the dirty sessions were discarded on release: the one left for reuse is the clean one
        pool.size shouldBe 1
        val reused = pool.acquire(30)
        reused.lsid shouldBe clean.single()
        reused.isDirty shouldBe false
    }
})
