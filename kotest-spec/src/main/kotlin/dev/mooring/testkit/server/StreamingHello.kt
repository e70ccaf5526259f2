package dev.mooring.testkit.server

import dev.mooring.testkit.replset.TopologyVersion
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.MutableStateFlow
import kotlinx.coroutines.flow.StateFlow
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.withTimeoutOrNull
import org.bson.BsonDocument

/**
 * The streaming hello protocol of a MongoDB 4.4+ mongod or mongos (server-monitoring.md) for a
 * [WireServer]'s built-in hello: every hello reply carries the server's [topologyVersion]; a
 * hello with `topologyVersion` and `maxAwaitTimeMS` (an awaitable hello) is answered when the
 * topologyVersion changes ([changeTopology]) or after maxAwaitTimeMS, and, with the OP_MSG
 * `exhaustAllowed` flag, streamed: one reply per change or maxAwaitTimeMS, each with moreToCome,
 * until a reply fails. As on mongod, the failCommand fail point is evaluated again for every
 * streamed reply. The request errors mongod gives (31368, 31372, 31382, TypeMismatch, BadValue)
 * are given too.
 *
 * Thread-safe: [changeTopology] may be called from any thread; any number of connections may
 * await at once. Holds no coroutine of its own (the awaiting runs in the connection's coroutine,
 * which the server cancels on close).
 */
class StreamingHello {
    private val version = MutableStateFlow(TopologyVersion.fresh())

    /** The server's current topologyVersion (a fresh processId per instance, counter from 0). */
    val topologyVersion: StateFlow<TopologyVersion> get() = version

    /** A topology-relevant change: increments the counter, which answers every awaiting hello. */
    fun changeTopology() {
        version.value = version.value.next()
    }

    /** [reply] with the current topologyVersion added (for an `ok: 1` reply). */
    fun withTopologyVersion(reply: BsonDocument): BsonDocument =
        if (reply["ok"]?.takeIf { it.isNumber }?.asNumber()?.intValue() == 1) reply.clone().append("topologyVersion", version.value.toBson()) else reply

    /**
     * The answer to hello [cmd]: null for a plain hello (the caller answers it with [reply]
     * through [withTopologyVersion]); otherwise the awaitable or streamed answer, each reply
     * produced by [reply].
     */
    fun answer(ctx: RequestContext, cmd: BsonDocument, reply: () -> BsonDocument): Reply? {
        val tvValue = cmd["topologyVersion"]
        val maxAwaitValue = cmd["maxAwaitTimeMS"]
        if (tvValue == null && maxAwaitValue == null) return null
        if (tvValue == null) return err(31368, "Location31368", "A request with 'maxAwaitTimeMS' must include a 'topologyVersion'")
        if (maxAwaitValue == null) return err(31372, "Location31372", "A request with a 'topologyVersion' must include 'maxAwaitTimeMS'")
        if (!tvValue.isDocument) return err(14, "TypeMismatch", "topologyVersion must be a document")
        val requested = try {
            TopologyVersion.parse(tvValue.asDocument())
        } catch (e: IllegalArgumentException) {
            return err(14, "TypeMismatch", e.message ?: "bad topologyVersion")
        }
        if (!maxAwaitValue.isNumber) return err(14, "TypeMismatch", "maxAwaitTimeMS must be a number")
        val maxAwait = maxAwaitValue.asNumber().longValue()
        if (maxAwait < 0) return err(2, "BadValue", "maxAwaitTimeMS must be a non-negative integer")
        return Reply.Exhaust(
            flow {
                var known = requested
                var first = true
                while (true) {
                    if (!first) {
                        val failure = failPointOnRerun(ctx)
                        if (failure != null) {
                            emit(Reply.Streamed(failure, moreToCome = false))
                            break
                        }
                    }
                    first = false
                    val error = awaitChange(known, maxAwait)
                    if (error != null) {
                        emit(Reply.Streamed(error, moreToCome = false))
                        break
                    }
                    val doc = withTopologyVersion(reply())
                    val ok = doc["ok"]?.takeIf { it.isNumber }?.asNumber()?.intValue() == 1
                    emit(Reply.Streamed(doc, moreToCome = ok))
                    if (!ok) break
                    known = version.value
                }
            },
        )
    }

    /** Waits while [known] is current, at most [maxAwaitMS]; an error document for a counter from this process's future. */
    private suspend fun awaitChange(known: TopologyVersion, maxAwaitMS: Long): BsonDocument? {
        val current = version.value
        if (known.processId != current.processId || known.counter < current.counter) return null
        if (known.counter > current.counter) {
            return WireServer.error(
                31382, "Location31382",
                "Received a topology version with counter: ${known.counter} which is greater than the server topology version counter: ${current.counter}",
            )
        }
        withTimeoutOrNull(maxAwaitMS) { version.first { it != known } }
        return null
    }

    private fun err(code: Int, name: String, msg: String): Reply = Reply.Document(WireServer.error(code, name, msg))

    companion object {
        /**
         * The failCommand check for an exhaust re-run of a command (the first run went through
         * the WireServer's own check): blocks for blockTimeMS, closes the connection (by failing
         * the stream, which makes the WireServer drop the socket) or returns the error reply to
         * end the stream with; null when the fail point does not fire.
         */
        suspend fun failPointOnRerun(ctx: RequestContext): BsonDocument? {
            val fp = ctx.server.activeFailPoint ?: return null
            if (!fp.fires(ctx.commandName, ctx.appName)) return null
            fp.blockTimeMS?.let { delay(it) }
            if (fp.closeConnection) throw FailPointClosedConnection()
            return if (fp.errorCode != null) fp.errorReply() else null
        }
    }

    private class FailPointClosedConnection : RuntimeException("failCommand closeConnection on an exhaust hello")
}
