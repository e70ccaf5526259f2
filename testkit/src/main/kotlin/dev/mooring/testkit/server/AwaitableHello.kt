package dev.mooring.testkit.server

import dev.mooring.testkit.replset.TopologyVersion
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.StateFlow
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.withTimeoutOrNull
import org.bson.BsonDocument

/**
 * The awaitable hello of MongoDB 4.4+ (server-monitoring.md "Streaming protocol"), shared by
 * the test kit's servers that stream: request validation with mongod's errors (31368, 31372,
 * 31382, TypeMismatch, BadValue), the wait for a topologyVersion change or maxAwaitTimeMS, and
 * with the OP_MSG `exhaustAllowed` flag the stream of replies (the failCommand fail point is
 * evaluated again for every streamed reply, as mongod re-runs the command). Stateless; thread-safe.
 */
object AwaitableHello {
    /**
     * The answer to hello [cmd] when it is awaitable, null for a plain hello. [version] is the
     * server's topologyVersion; [beforeReply] runs before each reply (a partitioned member waits
     * there); [reply] produces a reply and the topologyVersion it reports.
     */
    fun answer(
        ctx: RequestContext,
        cmd: BsonDocument,
        version: StateFlow<TopologyVersion>,
        beforeReply: suspend () -> Unit = {},
        reply: suspend () -> Pair<BsonDocument, TopologyVersion>,
    ): Reply? {
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
        // without exhaustAllowed the WireServer sends only the first item, without moreToCome
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
                    val error = awaitChange(version, known, maxAwait)
                    if (error != null) {
                        emit(Reply.Streamed(error, moreToCome = false))
                        break
                    }
                    beforeReply()
                    val (doc, tv) = reply()
                    val ok = doc["ok"]?.takeIf { it.isNumber }?.asNumber()?.intValue() == 1
                    emit(Reply.Streamed(doc, moreToCome = ok))
                    if (!ok) break
                    known = tv
                }
            },
        )
    }

    /**
     * Waits while [known] is [version]'s current value, at most [maxAwaitMS]. Returns at once for
     * a stale version (other processId or lower counter); an error document for a counter from
     * the future of this process, as mongod does.
     */
    private suspend fun awaitChange(version: StateFlow<TopologyVersion>, known: TopologyVersion, maxAwaitMS: Long): BsonDocument? {
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

    /**
     * The failCommand check for an exhaust re-run (the first run went through the WireServer's
     * own check): blocks for blockTimeMS, closes the connection (by failing the stream, which
     * makes the WireServer drop the socket) or returns the error reply to end the stream with.
     */
    private suspend fun failPointOnRerun(ctx: RequestContext): BsonDocument? {
        val fp = ctx.server.activeFailPoint ?: return null
        if (!fp.fires(ctx.commandName, ctx.appName)) return null
        fp.blockTimeMS?.let { delay(it) }
        if (fp.closeConnection) throw FailPointClosedConnection()
        return if (fp.errorCode != null) fp.errorReply() else null
    }

    private class FailPointClosedConnection : RuntimeException("failCommand closeConnection on an exhaust hello")

    private fun err(code: Int, name: String, msg: String): Reply = Reply.Document(WireServer.error(code, name, msg))
}
