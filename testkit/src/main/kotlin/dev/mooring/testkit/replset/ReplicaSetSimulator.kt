package dev.mooring.testkit.replset

import dev.mooring.testkit.replset.internal.ElectionIds
import dev.mooring.testkit.replset.internal.HelloReplies
import dev.mooring.testkit.replset.internal.HelloSnapshot
import dev.mooring.testkit.replset.internal.MemberCommandHandler
import dev.mooring.testkit.replset.internal.PortRelease
import dev.mooring.testkit.replset.internal.ReplSetStatus
import dev.mooring.testkit.replset.internal.StatusRow
import dev.mooring.testkit.server.InMemoryCollections
import dev.mooring.testkit.server.ClusterTimeKeeper
import dev.mooring.testkit.server.WireServer
import kotlinx.coroutines.delay
import kotlinx.coroutines.sync.Mutex
import kotlinx.coroutines.sync.withLock
import org.bson.BsonDocument
import org.bson.BsonTimestamp
import org.bson.types.ObjectId
import java.net.BindException

/**
 * A scriptable replica set for tests: N [SimulatedMember]s, each a [WireServer] on its own
 * loopback port, answering hello / legacy hello (also awaitable and exhaust, as the streaming
 * SDAM protocol expects) from one shared state — the [currentConfig] (setVersion), the current
 * [primary] and election [term] (electionId) — plus each member's runtime state (up, partitioned,
 * recovering, quiescing, lastWrite, wire versions, topologyVersion).
 *
 * Members are named `127.0.0.1:<port>`. Create one with [start]; a seed for a client is [seedUri].
 * Application commands: `ping` and friends (the WireServer's built-ins), `insert`/`delete`/`drop`
 * on the primary only (else `NotWritablePrimary` 10107), `find` on the primary, or on a secondary
 * when the OP_MSG carries a non-primary `$readPreference` (else 13435/13436). The data lives in one
 * [collections] shared by all members (replication is instant). `replSetStepDown` steps the
 * primary down; `replSetGetStatus` reports the members as this one sees them. Unknown commands
 * get `CommandNotFound` (59). Fail points: per member through
 * [SimulatedMember.configureFailPoint] or the `configureFailPoint` command.
 *
 * Every state change that alters a member's hello (election, step down, reconfiguration, quiesce,
 * wire versions, recovering) increments the topologyVersion counter of every running member and
 * wakes their waiting awaitable hellos. lastWrite changes do not (as on mongod).
 *
 * Fail points fire on every reply of an exhaust hello stream too (mongod re-runs the command for
 * each reply): closeConnection drops the stream, errorCode ends it with that error.
 *
 * ```
 * ReplicaSetSimulator.start().use { rs ->          // 3 members, "rs0", members[0] primary
 *     val uri = rs.seedUri("heartbeatFrequencyMS=500")
 *     rs.stepDown(); rs.elect(rs.members[1])      // failover
 *     rs.kill(rs.members[2]); rs.restart(rs.members[2])
 *     rs.partition(rs.members[0]); rs.heal(rs.members[0])
 *     rs.reconfigure { addMember(tags = mapOf("dc" to "east")); update(rs.members[2]) { it.copy(hidden = true, priority = 0.0) } }
 * }
 * ```
 *
 * Thread-safety: all controls may be called from any thread or coroutine; the state is guarded
 * by one lock, held only for short non-suspending updates. Suspending controls ([kill], [restart],
 * [reconfigure]) are serialized per member / per simulator and are not cancellable halfway through
 * a state change. After [close] every control throws [IllegalStateException]; read-only
 * properties still answer.
 */
class ReplicaSetSimulator private constructor(
    /** The replica set name (`setName`). */
    val setName: String,
    private val defaultMaxWireVersion: Int,
    /**
     * The set's logical clock when it reports cluster times (started with `clusterTime = true`):
     * every member of wire version 6 (MongoDB 3.6) or later then stamps its replies with it.
     */
    val clusterTime: ClusterTimeKeeper?,
) : AutoCloseable {
    internal val lock = Any()
    private val reconfigureMutex = Mutex()

    // guarded by lock
    private var config: ReplicaSetConfig? = null
    private var primaryMember: SimulatedMember? = null
    private var currentTerm = 0L
    private var currentElectionId: ObjectId? = null
    private val everyMember = ArrayList<SimulatedMember>()
    private var closed = false

    /** The documents every member reads and writes (instant replication). */
    val collections: InMemoryCollections = InMemoryCollections().also { c -> clusterTime?.let { c.changeEvents.clock = it } }

    /** The current configuration. */
    val currentConfig: ReplicaSetConfig get() = synchronized(lock) { config!! }

    /** The configured members, in configuration order. */
    val members: List<SimulatedMember>
        get() = synchronized(lock) { config!!.members.map { mc -> everyMember.first { it.host == mc.host } } }

    /** Every member ever started, including removed ones. */
    val allMembers: List<SimulatedMember> get() = synchronized(lock) { everyMember.toList() }

    /** The configured hosts (`127.0.0.1:<port>`), in configuration order, arbiters and hidden ones included. */
    val hosts: List<String> get() = currentConfig.members.map { it.host }

    /** The primary, or null when the set has none. */
    val primary: SimulatedMember? get() = synchronized(lock) { primaryMember }

    /** The configured members that are secondaries now. */
    val secondaries: List<SimulatedMember> get() = members.filter { it.state == MemberState.SECONDARY }

    /** The election term (0 before the first election). */
    val term: Long get() = synchronized(lock) { currentTerm }

    /** The current primary's electionId (kept after a step down until the next election). */
    val electionId: ObjectId? get() = synchronized(lock) { currentElectionId }

    /** The member named [host], if any (removed members included). */
    fun member(host: String): SimulatedMember? = synchronized(lock) { everyMember.firstOrNull { it.host == host.lowercase() } }

    /**
     * `mongodb://<seed>/?replicaSet=<setName>` plus [options] (`key=value&...`, without a leading `&`).
     * The seed is one member only, so a client must discover the others.
     */
    fun seedUri(options: String = "", seed: SimulatedMember = members.first()): String =
        "mongodb://${seed.host}/?replicaSet=$setName" + if (options.isEmpty()) "" else "&$options"

    /** The hello reply [member] would send now (without waiting), for inspection in tests. */
    fun helloReply(member: SimulatedMember, legacy: Boolean = false): BsonDocument =
        helloReply(member, legacy, helloOk = false, connectionId = 0).first

    // ---- controls ---------------------------------------------------------------------------

    /**
     * Steps [member] (default: the primary) down to secondary. The set has no primary until the
     * next [elect]. Its open transactions are aborted, as mongod's are when it steps down (a
     * later command or commit of one fails with NoSuchTransaction). Throws
     * [IllegalStateException] if [member] is not the primary.
     */
    fun stepDown(member: SimulatedMember? = primary) {
        synchronized(lock) {
            checkOpen()
            checkNotNull(member) { "the set has no primary to step down" }
            check(member === primaryMember) { "${member.host} is not the primary" }
            primaryMember = null
            bumpAll()
        }
        collections.abortOpenTransactions()
    }

    /**
     * Elects [member]: a new term (electionId greater than every previous one), [member] becomes
     * primary and a former primary becomes secondary. Throws [IllegalArgumentException] if
     * [member] is not an electable configured member (arbiter, priority 0, hidden, removed) and
     * [IllegalStateException] if it is down.
     */
    fun elect(member: SimulatedMember) {
        synchronized(lock) {
            checkOpen()
            require(member in everyMember) { "${member.host} does not belong to this simulator" }
            val mc = config!!.member(member.host) ?: throw IllegalArgumentException("${member.host} is not in the configuration")
            require(mc.electable) { "${member.host} cannot become primary (arbiterOnly=${mc.arbiterOnly}, priority=${mc.priority})" }
            check(member.up) { "${member.host} is down" }
            currentTerm++
            currentElectionId = ElectionIds.forTerm(currentTerm)
            primaryMember = member
            member.recovering = false
            bumpAll()
        }
    }

    /**
     * Kills [member]'s process: closes its listening socket and every connection (in-flight
     * requests get no reply); when it returns, connections are refused until [restart]. A killed primary leaves the
     * set without a primary (the others' hello drop `primary`) until [elect], and its open transactions are aborted. Idempotent.
     */
    suspend fun kill(member: SimulatedMember) {
        owned(member)
        member.lifecycle.withLock {
            val server = synchronized(lock) {
                checkOpen()
                if (!member.up) return
                member.up = false
                if (primaryMember === member) {
                    primaryMember = null
                    bumpAll()
                    // the process that held the open transactions is gone
                    collections.abortOpenTransactions()
                }
                member.server.also { member.server = null }
            }
            if (server != null) {
                server.close()
                check(PortRelease.await(member.port)) { "${member.host} still accepts connections after kill" }
            }
        }
    }

    /**
     * Restarts a killed [member] on the same port, with a new topologyVersion processId, as a
     * secondary (or arbiter). Fail points are gone, as after a mongod restart. Throws
     * [IllegalStateException] if it is up, or if the port cannot be bound again within ~5 s.
     */
    suspend fun restart(member: SimulatedMember) {
        owned(member)
        member.lifecycle.withLock {
            synchronized(lock) {
                checkOpen()
                check(!member.up) { "${member.host} is running; kill it first" }
            }
            val server = bindAgain(member.port)
            synchronized(lock) {
                // a fresh process: new processId, not recovering, not quiescing
                member.topology.value = TopologyVersion.fresh()
                member.recovering = false
                member.shuttingDown = false
            }
            install(member, server)
            val accepted = synchronized(lock) {
                if (closed) {
                    false
                } else {
                    member.server = server
                    member.up = true
                    true
                }
            }
            if (!accepted) {
                server.close()
                throw IllegalStateException("the replica set simulator is closed")
            }
        }
    }

    /**
     * Partitions [member] from every client: it keeps accepting connections and reading requests
     * but answers none (awaitable hellos and exhaust streams stop too) until [heal]. The
     * replica set's state is unchanged: script an [elect] if the test needs a new primary.
     */
    fun partition(member: SimulatedMember) {
        owned(member)
        synchronized(lock) { checkOpen() }
        member.reachable.value = false
    }

    /** Ends a [partition]: held requests are answered now (as TCP would deliver them late). */
    fun heal(member: SimulatedMember) {
        owned(member)
        synchronized(lock) { checkOpen() }
        member.reachable.value = true
    }

    /**
     * Changes the configuration: [block] adds, removes and updates members through a
     * [Reconfiguration]; when it returns, the new configuration (version + 1) applies atomically
     * and every member's topologyVersion bumps. A primary that is removed or no longer electable
     * steps down. If [block] or validation throws, nothing changes and added members are stopped.
     * Returns the new configuration.
     */
    suspend fun reconfigure(block: suspend Reconfiguration.() -> Unit): ReplicaSetConfig = reconfigureMutex.withLock {
        val edits = Reconfiguration(this, currentConfig)
        try {
            edits.block()
            synchronized(lock) {
                checkOpen()
                val next = ReplicaSetConfig(setName, config!!.version + 1, edits.draft.toList())
                config = next
                val p = primaryMember
                if (p != null && next.member(p.host)?.electable != true) primaryMember = null
                bumpAll()
                next
            }
        } catch (t: Throwable) {
            for (m in edits.added) {
                synchronized(lock) { everyMember.remove(m); m.up = false }
                m.server?.close()
            }
            throw t
        }
    }

    /** Sets [member]'s lastWrite (e.g. to script replication lag for max staleness). No topologyVersion bump. */
    fun setLastWrite(member: SimulatedMember, lastWrite: LastWrite) {
        owned(member)
        synchronized(lock) {
            checkOpen()
            member.lastWriteValue = lastWrite
        }
    }

    /** Sets [member]'s lastWriteDate to [lastWriteDateMillis] (opTime derived from it, current term). */
    fun setLastWriteDate(member: SimulatedMember, lastWriteDateMillis: Long) =
        setLastWrite(member, LastWrite.at(lastWriteDateMillis, term))

    /**
     * Puts [member] in (or out of) quiesce mode: every command, hello included (awaitable ones are
     * woken), answers `ShutdownInProgress` (91) with the topologyVersion.
     */
    fun setShuttingDown(member: SimulatedMember, shuttingDown: Boolean) = changeMember(member) { it.shuttingDown = shuttingDown }

    /**
     * Puts [member] in (or out of) RECOVERING: neither primary nor secondary (SDAM RSOther). A
     * recovering primary steps down.
     */
    fun setRecovering(member: SimulatedMember, recovering: Boolean) = changeMember(member) {
        it.recovering = recovering
        if (recovering && primaryMember === it) primaryMember = null
    }

    /** Sets the wire versions [member] reports. Throws [IllegalArgumentException] unless 0 <= min <= max. */
    fun setWireVersions(member: SimulatedMember, minWireVersion: Int, maxWireVersion: Int) {
        require(minWireVersion in 0..maxWireVersion) { "need 0 <= minWireVersion <= maxWireVersion, got $minWireVersion..$maxWireVersion" }
        changeMember(member) {
            it.minWireVersion = minWireVersion
            it.maxWireVersion = maxWireVersion
        }
        member.server?.maxWireVersion = maxWireVersion
        member.server?.labelsRetryableWriteErrors = maxWireVersion >= LABELLING_WIRE_VERSION
        member.server?.clusterTime = clusterTime?.takeIf { maxWireVersion >= CLUSTER_TIME_WIRE_VERSION }
    }

    /**
     * Stops every member (removed ones included) and their coroutines. Idempotent. Blocks briefly
     * (bounded, ~5 s at worst) until the members' ports refuse connections.
     */
    override fun close() {
        val servers = synchronized(lock) {
            if (closed) return
            closed = true
            everyMember.onEach { it.up = false }.mapNotNull { m -> m.server.also { m.server = null } }
        }
        for (s in servers) s.close()
        for (s in servers) PortRelease.awaitBlocking(s.port)
    }

    // ---- internals used by the members' handlers --------------------------------------------

    internal fun stateOf(member: SimulatedMember): MemberState = synchronized(lock) { stateLocked(member) }

    private fun stateLocked(member: SimulatedMember): MemberState {
        val mc = config?.member(member.host) ?: return MemberState.REMOVED
        return when {
            mc.arbiterOnly -> MemberState.ARBITER
            primaryMember === member -> MemberState.PRIMARY
            member.recovering -> MemberState.RECOVERING
            else -> MemberState.SECONDARY
        }
    }

    internal fun snapshot(member: SimulatedMember): HelloSnapshot = synchronized(lock) {
        val cfg = config!!
        HelloSnapshot(
            host = member.host,
            state = stateLocked(member),
            config = cfg,
            self = cfg.member(member.host),
            primaryHost = primaryMember?.host,
            electionId = currentElectionId,
            topologyVersion = member.topology.value,
            lastWrite = member.lastWriteValue,
            minWireVersion = member.minWireVersion,
            maxWireVersion = member.maxWireVersion,
            shuttingDown = member.shuttingDown,
        )
    }

    /** The hello reply and the topologyVersion it carries, consistent with each other. */
    internal fun helloReply(member: SimulatedMember, legacy: Boolean, helloOk: Boolean, connectionId: Long): Pair<BsonDocument, TopologyVersion> {
        val snap = snapshot(member)
        return HelloReplies.build(snap, legacy, helloOk, connectionId) to snap.topologyVersion
    }

    /** Runs [write] if [member] is the primary (then advances lastWrite), else answers NotWritablePrimary. */
    internal fun writeOnPrimary(member: SimulatedMember, write: () -> BsonDocument): BsonDocument = synchronized(lock) {
        if (primaryMember !== member) return HelloReplies.notWritablePrimary(snapshot(member))
        val reply = write()
        val now = System.currentTimeMillis()
        val prev = member.lastWriteValue.opTime
        val seconds = (now / 1000).toInt()
        val ts = if (seconds > prev.time) BsonTimestamp(seconds, 1) else BsonTimestamp(prev.time, prev.inc + 1)
        val lw = LastWrite(ts, currentTerm, now)
        for (m in everyMember) {
            val mc = config!!.member(m.host)
            if (m.up && m.reachable.value && mc != null && !mc.arbiterOnly) m.lastWriteValue = lw
        }
        reply
    }

    /**
     * `replSetGetStatus` as [member] sees the set: members that are down or partitioned are
     * unhealthy. A member without a configuration answers `NotYetInitialized` (94).
     */
    internal fun status(member: SimulatedMember): BsonDocument = synchronized(lock) {
        val cfg = config!!
        val myState = stateLocked(member)
        if (myState == MemberState.REMOVED) {
            return WireServer.error(94, "NotYetInitialized", "no replset config has been received")
        }
        val rows = cfg.members.map { mc ->
            val m = everyMember.first { it.host == mc.host }
            val self = m === member
            StatusRow(mc.id, mc.host, stateLocked(m), self || (m.up && m.reachable.value), m.lastWriteValue, self)
        }
        ReplSetStatus.build(setName, currentTerm, myState, rows)
    }

    /** Steps [member] down if it is the primary; false otherwise. */
    internal fun stepDownIfPrimary(member: SimulatedMember): Boolean {
        synchronized(lock) {
            if (closed || primaryMember !== member) return false
            primaryMember = null
            bumpAll()
        }
        // mongod aborts its open transactions when it steps down
        collections.abortOpenTransactions()
        return true
    }

    /**
     * When true, a `replSetStepDown` received over the wire is followed at once by the election
     * of another member (MongoDB 4.0.2+'s election handoff): the first configured, electable,
     * up, reachable secondary that is not frozen (by `replSetFreeze`, or by its own
     * `replSetStepDown: seconds`); the stepped-down member is never the candidate. When false
     * (the default) the set stays without a primary until [elect]. [elect] ignores freezes.
     */
    @Volatile
    var electionHandoff: Boolean = false

    /** After [from] stepped down over the wire: the election handoff, when enabled; returns the new primary or null. */
    internal fun handOffElection(from: SimulatedMember): SimulatedMember? = synchronized(lock) {
        if (!electionHandoff || closed || primaryMember != null) return null
        val now = System.currentTimeMillis()
        val candidate = everyMember.firstOrNull { m ->
            m !== from && m.up && m.reachable.value && m.frozenUntilMillis <= now &&
                config?.member(m.host)?.electable == true && stateLocked(m) == MemberState.SECONDARY
        } ?: return null
        elect(candidate)
        candidate
    }

    /**
     * `replSetFreeze: seconds` on [member]: false when it is the primary (mongod's NotSecondary);
     * otherwise it is no election handoff candidate for [seconds] (0 unfreezes).
     */
    internal fun freeze(member: SimulatedMember, seconds: Long): Boolean = synchronized(lock) {
        if (primaryMember === member) return false
        member.frozenUntilMillis = if (seconds == 0L) 0L else System.currentTimeMillis() + seconds * 1000
        true
    }

    /** Starts a member's server on a fresh port and registers it (not yet configured). */
    internal suspend fun startMember(): SimulatedMember {
        val server = WireServer.start()
        val member = SimulatedMember(this, server, LastWrite.at(System.currentTimeMillis(), synchronized(lock) { currentTerm }), 0, defaultMaxWireVersion)
        install(member, server)
        val registered = synchronized(lock) { if (closed) false else everyMember.add(member) }
        if (!registered) {
            server.close()
            throw IllegalStateException("the replica set simulator is closed")
        }
        return member
    }

    private fun install(member: SimulatedMember, server: WireServer) {
        // the data commands the server answers itself (its cursor-opening reads) follow the member's version
        server.maxWireVersion = member.maxWireVersion
        server.labelsRetryableWriteErrors = member.maxWireVersion >= LABELLING_WIRE_VERSION
        server.clusterTime = clusterTime?.takeIf { member.maxWireVersion >= CLUSTER_TIME_WIRE_VERSION }
        val handler = MemberCommandHandler(this, member)
        server.handler = handler::handle
        server.hello = { ctx, cmd ->
            val helloOk = cmd["helloOk"]?.let { it.isBoolean && it.asBoolean().value } == true
            helloReply(member, ctx.commandName != "hello", helloOk, ctx.connectionNumber.toLong()).first
        }
    }

    private suspend fun bindAgain(port: Int): WireServer {
        var last: Throwable? = null
        repeat(50) {
            try {
                return WireServer.start(port = port)
            } catch (e: BindException) {
                last = e
            } catch (e: java.io.IOException) {
                last = e
            }
            delay(100)
        }
        throw IllegalStateException("could not bind 127.0.0.1:$port again", last)
    }

    private fun changeMember(member: SimulatedMember, change: (SimulatedMember) -> Unit) {
        owned(member)
        synchronized(lock) {
            checkOpen()
            change(member)
            bumpAll()
        }
    }

    /** Under [lock]: the next topologyVersion for every running member (wakes awaitable hellos). */
    private fun bumpAll() {
        for (m in everyMember) if (m.up) m.topology.value = m.topology.value.next()
    }

    private fun checkOpen() = check(!closed) { "the replica set simulator is closed" }

    private fun owned(member: SimulatedMember) =
        require(synchronized(lock) { member in everyMember }) { "${member.host} does not belong to this simulator" }

    private fun initialize(cfg: ReplicaSetConfig, initialPrimary: SimulatedMember?) {
        synchronized(lock) {
            config = cfg
            if (initialPrimary != null) {
                currentTerm = 1
                currentElectionId = ElectionIds.forTerm(1)
                primaryMember = initialPrimary
                val now = System.currentTimeMillis()
                for (m in everyMember) m.lastWriteValue = LastWrite.at(now, 1)
            }
        }
    }

    companion object {
        /** MongoDB 4.4: from this wire version on, the server labels retryable write errors itself. */
        private const val LABELLING_WIRE_VERSION = 9

        /** MongoDB 3.6: from this wire version on, replica set members report cluster times. */
        private const val CLUSTER_TIME_WIRE_VERSION = 6

        /**
         * Starts a replica set named [setName] with [dataMembers] data-bearing members and
         * [arbiters] arbiters (config version 1), all reporting wire versions 0..[maxWireVersion].
         * The data-bearing member at index [initialPrimary] (null: none) is elected in term 1.
         * With [clusterTime] the members report the set's cluster time ([ReplicaSetSimulator.clusterTime]).
         * Throws [IllegalArgumentException] for bad counts; on failure every started server is closed.
         */
        suspend fun start(
            dataMembers: Int = 3,
            setName: String = "rs0",
            arbiters: Int = 0,
            maxWireVersion: Int = 21,
            initialPrimary: Int? = 0,
            clusterTime: Boolean = false,
        ): ReplicaSetSimulator {
            require(dataMembers >= 1) { "a replica set needs at least one data-bearing member, got $dataMembers" }
            require(arbiters >= 0) { "arbiters must not be negative, got $arbiters" }
            require(setName.isNotEmpty()) { "setName must not be empty" }
            require(maxWireVersion >= 0) { "maxWireVersion must not be negative" }
            require(initialPrimary == null || initialPrimary in 0 until dataMembers) {
                "initialPrimary must be null or in 0 until $dataMembers, got $initialPrimary"
            }
            val sim = ReplicaSetSimulator(setName, maxWireVersion, if (clusterTime) ClusterTimeKeeper() else null)
            try {
                val started = (0 until dataMembers + arbiters).map { sim.startMember() }
                val configs = started.mapIndexed { i, m -> MemberConfig(i, m.host, arbiterOnly = i >= dataMembers) }
                sim.initialize(ReplicaSetConfig(setName, 1, configs), initialPrimary?.let { started[it] })
            } catch (t: Throwable) {
                sim.close()
                throw t
            }
            return sim
        }
    }
}
