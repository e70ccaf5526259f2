package dev.mooring.testkit.replset.internal

import dev.mooring.testkit.replset.MemberState
import dev.mooring.testkit.replset.ReplicaSetSimulator
import dev.mooring.testkit.replset.SimulatedMember
import dev.mooring.testkit.server.ClientBulkWriteCommand
import dev.mooring.testkit.server.CursorCommands
import dev.mooring.testkit.server.InMemoryCollections
import dev.mooring.testkit.server.Reply
import dev.mooring.testkit.server.RequestContext
import dev.mooring.testkit.server.AwaitableHello
import dev.mooring.testkit.server.WireServer
import kotlinx.coroutines.flow.first
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
        // a member parses a command before running it: a field its release does not know is refused first
        ctx.server.versionRefusal(cmd)?.let { return Reply.Document(it) }
        return when (ctx.commandName) {
            "hello", "isMaster", "ismaster" -> hello(ctx, cmd)
            // client bulkWrite came with MongoDB 8.0 (wire version 25)
            ClientBulkWriteCommand.NAME -> if (member.maxWireVersion < ClientBulkWriteCommand.WIRE_VERSION) err(59, "CommandNotFound", "no such command: 'bulkWrite'") else write(db, cmd)
            in InMemoryCollections.WRITES -> write(db, cmd)
            // a transaction ends on the primary (NotWritablePrimary elsewhere, as a write)
            "commitTransaction", "abortTransaction" -> write(db, cmd).let { unsatisfiable(cmd, it) }
            "aggregate" -> if (isAggregateWrite(cmd)) write(db, cmd) else read(ctx, db, cmd)
            // a cursor lives on the member that opened it: its server's built-in cursor commands answer
            "getMore", "killCursors" -> null
            in InMemoryCollections.COMMANDS -> read(ctx, db, cmd)
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
        return AwaitableHello.answer(ctx, cmd, member.topology, ::awaitReachable) { sim.helloReply(member, legacy, helloOk, connectionId) }
            ?: Reply.Document(sim.helloReply(member, legacy, helloOk, connectionId).first)
    }

    private fun write(db: String, cmd: BsonDocument): Reply = guarded {
        sim.writeOnPrimary(member) { sim.collections.execute(db, cmd, member.server?.activeTransactionalWriteFailPoint, maxWireVersion = member.maxWireVersion)!! }
    }

    /**
     * [reply] with mongod's UnsatisfiableWriteConcern (100) writeConcernError when [cmd] asks for
     * more acknowledgements (numeric `w`) than the set has data-bearing members.
     */
    private fun unsatisfiable(cmd: BsonDocument, reply: Reply): Reply {
        val w = (cmd["writeConcern"] as? BsonDocument)?.get("w")?.takeIf { it.isNumber }?.asNumber()?.intValue() ?: return reply
        val dataBearing = sim.currentConfig.members.count { !it.arbiterOnly }
        if (w <= dataBearing || reply !is Reply.Document || reply.document["ok"]?.asNumber()?.intValue() != 1) return reply
        val wce = BsonDocument("code", org.bson.BsonInt32(100)).append("codeName", org.bson.BsonString("UnsatisfiableWriteConcern"))
            .append("errmsg", org.bson.BsonString("Not enough data-bearing nodes"))
        return Reply.Document(reply.document.clone().append("writeConcernError", wce))
    }

    private fun isAggregateWrite(cmd: BsonDocument): Boolean =
        (cmd["pipeline"] as? org.bson.BsonArray)?.any { s -> s is BsonDocument && (s.containsKey("\$out") || s.containsKey("\$merge")) } == true

    private fun read(ctx: RequestContext, db: String, cmd: BsonDocument): Reply = guarded {
        val snap = sim.snapshot(member)
        val mode = cmd["\$readPreference"]?.takeIf { it.isDocument }?.asDocument()?.get("mode")
            ?.takeIf { it.isString }?.asString()?.value ?: "primary"
        when {
            snap.state == MemberState.PRIMARY || (snap.state == MemberState.SECONDARY && mode != "primary") ->
                CursorCommands.open(ctx, db, cmd, sim.collections) ?: sim.collections.execute(db, cmd, maxWireVersion = member.maxWireVersion)!!
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
