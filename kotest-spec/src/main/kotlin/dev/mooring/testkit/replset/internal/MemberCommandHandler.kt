package dev.mooring.testkit.replset.internal

import dev.mooring.testkit.replset.MemberState
import dev.mooring.testkit.replset.ReplicaSetSimulator
import dev.mooring.testkit.replset.SimulatedMember
import dev.mooring.testkit.replset.TopologyVersion
import dev.mooring.testkit.server.InMemoryCollections
import dev.mooring.testkit.server.Reply
import dev.mooring.testkit.server.RequestContext
import dev.mooring.testkit.server.WireServer
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.withTimeoutOrNull
import org.bson.BsonDocument
import org.bson.BsonInvalidOperationException

/**
 * The [dev.mooring.testkit.server.CommandHandler] of one member's server: hello (awaitable and
 * exhaust), the replica-set-aware data commands, replSetStepDown (with the simulator's election
 * handoff), replSetFreeze, partitions and quiesce mode.
 * Commands it does not know fall through (null) to the WireServer's built-ins. Stateless apart
 * from its references; safe to call from any number of connections at once.
 */
internal class MemberCommandHandler(private val sim: ReplicaSetSimulator, private val member: SimulatedMember) {

    suspend fun handle(ctx: RequestContext, db: String, cmd: BsonDocument): Reply? {
        awaitReachable()
        val snap = sim.snapshot(member)
        if (snap.shuttingDown) return Reply.Document(HelloReplies.shutdownInProgress(snap))
        return when (ctx.commandName) {
            "hello", "isMaster", "ismaster" -> hello(ctx, cmd)
            in InMemoryCollections.WRITES -> write(db, cmd)
            "aggregate" -> if (isAggregateWrite(cmd)) write(db, cmd) else read(db, cmd)
            in InMemoryCollections.COMMANDS -> read(db, cmd)
            // removed in MongoDB 6.2 (wire version 19): older members still answer it
            "getnonce" -> if (member.maxWireVersion < 19) {
                Reply.Document(org.bson.BsonDocument("nonce", org.bson.BsonString(java.util.UUID.randomUUID().toString().replace("-", ""))).append("ok", org.bson.BsonInt32(1)))
            } else {
                null
            }
            "replSetStepDown" -> stepDown(db, cmd)
            "replSetFreeze" -> freeze(db, cmd)
            "replSetGetStatus" -> if (db != "admin") {
                err(13, "Unauthorized", "replSetGetStatus may only be run against the admin database.")
            } else {
                Reply.Document(sim.status(member))
            }
            else -> null
        }
    }

    /** A partitioned member reads requests but answers none until healed (or killed). */
    private suspend fun awaitReachable() {
        member.reachable.first { it }
    }

    private suspend fun hello(ctx: RequestContext, cmd: BsonDocument): Reply {
        val legacy = ctx.commandName != "hello"
        val helloOk = cmd["helloOk"]?.let { it.isBoolean && it.asBoolean().value } == true
        val connectionId = ctx.connectionNumber.toLong()
        val tvValue = cmd["topologyVersion"]
        val maxAwaitValue = cmd["maxAwaitTimeMS"]
        if (tvValue == null && maxAwaitValue == null) {
            return Reply.Document(sim.helloReply(member, legacy, helloOk, connectionId).first)
        }
        if (tvValue == null) return err(31368, "A request with 'maxAwaitTimeMS' must include a 'topologyVersion'")
        if (maxAwaitValue == null) return err(31372, "A request with a 'topologyVersion' must include 'maxAwaitTimeMS'")
        if (!tvValue.isDocument) return err(14, "TypeMismatch", "topologyVersion must be a document")
        val requested = try {
            TopologyVersion.parse(tvValue.asDocument())
        } catch (e: IllegalArgumentException) {
            return err(14, "TypeMismatch", e.message ?: "bad topologyVersion")
        }
        if (!maxAwaitValue.isNumber) return err(14, "TypeMismatch", "maxAwaitTimeMS must be a number")
        val maxAwait = maxAwaitValue.asNumber().longValue()
        if (maxAwait < 0) return err(2, "BadValue", "maxAwaitTimeMS must be a non-negative integer")

        if (!ctx.exhaustAllowed) {
            awaitChange(requested, maxAwait)?.let { return Reply.Document(it) }
            awaitReachable()
            return Reply.Document(sim.helloReply(member, legacy, helloOk, connectionId).first)
        }
        return Reply.Exhaust(flow {
            var known = requested
            var first = true
            while (true) {
                if (!first) {
                    // mongod re-runs the command for every exhaust reply, so fail points fire on each
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
                awaitReachable()
                val (doc, tv) = sim.helloReply(member, legacy, helloOk, connectionId)
                val ok = doc["ok"]?.takeIf { it.isNumber }?.asNumber()?.intValue() == 1
                emit(Reply.Streamed(doc, moreToCome = ok))
                if (!ok) break
                known = tv
            }
        })
    }

    /**
     * The `failCommand` check for an exhaust re-run (the first run went through the WireServer's
     * own check): blocks for blockTimeMS, closes the connection (by failing the stream, which makes
     * the WireServer drop the socket) or returns the error reply to end the stream with.
     */
    private suspend fun failPointOnRerun(ctx: RequestContext): BsonDocument? {
        val fp = ctx.server.activeFailPoint ?: return null
        if (!fp.fires(ctx.commandName, ctx.appName)) return null
        fp.blockTimeMS?.let { delay(it) }
        if (fp.closeConnection) throw FailPointClosedConnection()
        return if (fp.errorCode != null) fp.errorReply() else null
    }

    private class FailPointClosedConnection : RuntimeException("failCommand closeConnection on an exhaust hello")

    /**
     * Waits while [known] is the member's current topologyVersion, at most [maxAwaitMS]. Returns at
     * once for a stale version (other processId or lower counter); an error document for a counter
     * from the future of this process, as mongod does.
     */
    private suspend fun awaitChange(known: TopologyVersion, maxAwaitMS: Long): BsonDocument? {
        val current = member.topology.value
        if (known.processId != current.processId || known.counter < current.counter) return null
        if (known.counter > current.counter) {
            return WireServer.error(
                31382, "Location31382",
                "Received a topology version with counter: ${known.counter} which is greater than the server topology version counter: ${current.counter}",
            )
        }
        withTimeoutOrNull(maxAwaitMS) { member.topology.first { it != known } }
        return null
    }

    private fun write(db: String, cmd: BsonDocument): Reply = guarded {
        sim.writeOnPrimary(member) { sim.collections.execute(db, cmd, member.server?.activeTransactionalWriteFailPoint)!! }
    }

    private fun isAggregateWrite(cmd: BsonDocument): Boolean =
        (cmd["pipeline"] as? org.bson.BsonArray)?.any { s -> s is BsonDocument && (s.containsKey("\$out") || s.containsKey("\$merge")) } == true

    private fun read(db: String, cmd: BsonDocument): Reply = guarded {
        val snap = sim.snapshot(member)
        val mode = cmd["\$readPreference"]?.takeIf { it.isDocument }?.asDocument()?.get("mode")
            ?.takeIf { it.isString }?.asString()?.value ?: "primary"
        when {
            snap.state == MemberState.PRIMARY -> sim.collections.execute(db, cmd)!!
            snap.state == MemberState.SECONDARY && mode != "primary" -> sim.collections.execute(db, cmd)!!
            snap.state == MemberState.SECONDARY -> HelloReplies.notPrimaryNoSecondaryOk(snap)
            else -> HelloReplies.notPrimaryOrSecondary(snap)
        }
    }

    private fun stepDown(db: String, cmd: BsonDocument): Reply {
        if (db != "admin") return err(13, "Unauthorized", "replSetStepDown may only be run against the admin database.")
        val seconds = cmd["replSetStepDown"]?.takeIf { it.isNumber }?.asNumber()?.longValue() ?: 60L
        if (!sim.stepDownIfPrimary(member)) return Reply.Document(HelloReplies.notWritablePrimary(sim.snapshot(member), "not primary so can't step down"))
        // as on mongod, the stepped-down member may not become primary again for that many seconds
        sim.freeze(member, seconds)
        sim.handOffElection(member)
        return Reply.Document(WireServer.ok())
    }

    private fun freeze(db: String, cmd: BsonDocument): Reply {
        if (db != "admin") return err(13, "Unauthorized", "replSetFreeze may only be run against the admin database.")
        val seconds = cmd["replSetFreeze"]?.takeIf { it.isNumber }?.asNumber()?.longValue()
            ?: return err(14, "TypeMismatch", "replSetFreeze needs a number of seconds")
        if (seconds < 0) return err(2, "BadValue", "replSetFreeze seconds must not be negative")
        return if (sim.freeze(member, seconds)) {
            Reply.Document(WireServer.ok())
        } else {
            err(95, "NotSecondary", "cannot freeze node when primary or running for election. state: Primary")
        }
    }

    private inline fun guarded(block: () -> BsonDocument): Reply = try {
        Reply.Document(block())
    } catch (e: BsonInvalidOperationException) {
        err(14, "TypeMismatch", "invalid command: ${e.message}")
    } catch (e: ClassCastException) {
        err(14, "TypeMismatch", "invalid command: ${e.message}")
    }

    private fun err(code: Int, msg: String): Reply = err(code, "Location$code", msg)

    private fun err(code: Int, name: String, msg: String): Reply = Reply.Document(WireServer.error(code, name, msg))
}
