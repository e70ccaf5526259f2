package dev.mooring.testkit.replset

/**
 * One member of a [ReplicaSetConfig], as in `replSetGetConfig().members[i]`. Immutable; validated
 * on construction like mongod validates a replica set configuration ([IllegalArgumentException]).
 *
 * In hello replies a member is listed in `hosts` when it is data-bearing, visible and has
 * priority > 0, in `passives` when data-bearing, visible and priority 0, and in `arbiters`
 * when it is an arbiter. Hidden members are in none of the lists.
 *
 * @property id the member's `_id`, unique within the configuration.
 * @property host `127.0.0.1:<port>`, lower-case.
 * @property priority election priority; 0 means the member can never become primary.
 * @property tags the member's tag set (read preference tags).
 */
data class MemberConfig(
    val id: Int,
    val host: String,
    val arbiterOnly: Boolean = false,
    val hidden: Boolean = false,
    val priority: Double = if (arbiterOnly || hidden) 0.0 else 1.0,
    val tags: Map<String, String> = emptyMap(),
    val votes: Int = 1,
) {
    init {
        require(id >= 0) { "member _id must not be negative, got $id" }
        require(host.isNotEmpty() && host == host.lowercase()) { "member host must be non-empty and lower-case, got '$host'" }
        require(priority >= 0.0 && priority <= 1000.0) { "priority must be in 0..1000, got $priority" }
        require(!hidden || priority == 0.0) { "a hidden member ($host) must have priority 0" }
        require(!arbiterOnly || priority == 0.0) { "an arbiter ($host) must have priority 0" }
        require(!arbiterOnly || tags.isEmpty()) { "an arbiter ($host) cannot have tags" }
        require(votes == 0 || votes == 1) { "votes must be 0 or 1, got $votes" }
    }

    /** True when the member may become primary. */
    val electable: Boolean get() = !arbiterOnly && priority > 0.0
}

/**
 * The shared replica set configuration. Immutable; the simulator swaps in a new one (with a
 * higher [version]) on every reconfiguration.
 *
 * @property version the configuration version, reported as `setVersion`.
 */
data class ReplicaSetConfig(val setName: String, val version: Int, val members: List<MemberConfig>) {
    init {
        require(setName.isNotEmpty()) { "setName must not be empty" }
        require(version >= 1) { "config version must be >= 1, got $version" }
        require(members.isNotEmpty()) { "a replica set configuration needs at least one member" }
        require(members.map { it.id }.toSet().size == members.size) { "member _id values must be unique" }
        require(members.map { it.host }.toSet().size == members.size) { "member hosts must be unique" }
    }

    /** The member with [host], if configured. */
    fun member(host: String): MemberConfig? = members.firstOrNull { it.host == host }

    /** Hosts listed in hello `hosts`: data-bearing, visible, priority > 0. */
    val hosts: List<String> get() = members.filter { !it.arbiterOnly && !it.hidden && it.priority > 0.0 }.map { it.host }

    /** Hosts listed in hello `passives`: data-bearing, visible, priority 0. */
    val passives: List<String> get() = members.filter { !it.arbiterOnly && !it.hidden && it.priority == 0.0 }.map { it.host }

    /** Hosts listed in hello `arbiters`. */
    val arbiters: List<String> get() = members.filter { it.arbiterOnly && !it.hidden }.map { it.host }
}
