package dev.mooring.sdam.internal.monitor

import org.bson.BsonBoolean
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonInt64
import org.bson.BsonValue

/**
 * The monitoring commands of server-monitoring.md: `hello` when the server said `helloOk: true`
 * (or a Stable API is declared), else legacy hello (`isMaster` with `helloOk: true`). Pure.
 */
internal object HelloCommands {
    /** A regular hello or legacy hello; both carry `helloOk: true`, as the spec's pseudocode does. */
    fun regular(helloOk: Boolean): BsonDocument =
        BsonDocument(if (helloOk) "hello" else "isMaster", BsonInt32(1)).append("helloOk", BsonBoolean.TRUE)

    /** An awaitable hello: [regular] plus the last [topologyVersion] and maxAwaitTimeMS. */
    fun awaitable(helloOk: Boolean, topologyVersion: BsonDocument, maxAwaitTimeMS: Long): BsonDocument =
        regular(helloOk)
            .append("topologyVersion", topologyVersion)
            .append("maxAwaitTimeMS", BsonInt64(maxAwaitTimeMS))

    /** True when [reply] says `helloOk: true`. */
    fun helloOk(reply: BsonDocument): Boolean = isTrue(reply["helloOk"])

    /** The topologyVersion document as the reply carried it, for echoing it back verbatim. */
    fun topologyVersionOf(reply: BsonDocument): BsonDocument? = reply["topologyVersion"] as? BsonDocument


    private fun isTrue(v: BsonValue?): Boolean = when {
        v == null -> false
        v.isBoolean -> v.asBoolean().value
        v.isNumber -> v.asNumber().doubleValue() != 0.0
        else -> false
    }
}
