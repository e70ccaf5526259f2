package dev.mooring.testkit.replset

/**
 * The edits of one [ReplicaSetSimulator.reconfigure] call, applied atomically (one new config
 * version, one topologyVersion bump on every member) when the block returns. Not thread-safe:
 * use it only inside the block it is passed to.
 */
class Reconfiguration internal constructor(
    private val simulator: ReplicaSetSimulator,
    base: ReplicaSetConfig,
) {
    internal val draft: MutableList<MemberConfig> = base.members.toMutableList()
    internal val added: MutableList<SimulatedMember> = ArrayList()

    /** The members as edited so far. */
    val members: List<MemberConfig> get() = draft.toList()

    /**
     * Starts a new member (a new server on a new port) and adds it with the given settings. Until
     * the block returns, the new member answers hello as a member without a configuration (REMOVED).
     */
    suspend fun addMember(
        arbiterOnly: Boolean = false,
        hidden: Boolean = false,
        priority: Double = if (arbiterOnly || hidden) 0.0 else 1.0,
        tags: Map<String, String> = emptyMap(),
        votes: Int = 1,
    ): SimulatedMember {
        val member = simulator.startMember()
        added += member
        val id = (draft.maxOfOrNull { it.id } ?: -1) + 1
        draft += MemberConfig(id, member.host, arbiterOnly, hidden, priority, tags, votes)
        return member
    }

    /** Removes [member] from the configuration (its server keeps running and answers as REMOVED). */
    fun remove(member: SimulatedMember) {
        require(draft.removeIf { it.host == member.host }) { "${member.host} is not in the configuration" }
    }

    /** Replaces [member]'s configuration entry with [change] of it (host and _id are kept). */
    fun update(member: SimulatedMember, change: (MemberConfig) -> MemberConfig) {
        val i = draft.indexOfFirst { it.host == member.host }
        require(i >= 0) { "${member.host} is not in the configuration" }
        val old = draft[i]
        draft[i] = change(old).copy(id = old.id, host = old.host)
    }
}
