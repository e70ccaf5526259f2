package dev.mooring.testkit.server

import dev.mooring.testkit.replset.TopologyVersion
import kotlinx.coroutines.flow.MutableStateFlow
import kotlinx.coroutines.flow.StateFlow
import org.bson.BsonDocument

/**
 * The streaming hello protocol of a MongoDB 4.4+ mongod or mongos (server-monitoring.md) for a
 * [WireServer]'s built-in hello: every `ok: 1` hello reply carries the server's
 * [topologyVersion]; an awaitable hello (`topologyVersion` and `maxAwaitTimeMS`) is answered by
 * [AwaitableHello]: when the topologyVersion changes ([changeTopology]) or after maxAwaitTimeMS,
 * streamed with `exhaustAllowed`.
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
    fun answer(ctx: RequestContext, cmd: BsonDocument, reply: () -> BsonDocument): Reply? =
        AwaitableHello.answer(ctx, cmd, version) { version.value.let { tv -> withTopologyVersion(reply()) to tv } }
}
