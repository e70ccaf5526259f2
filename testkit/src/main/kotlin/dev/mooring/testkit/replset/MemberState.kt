package dev.mooring.testkit.replset

/**
 * The replica set member state a [SimulatedMember] reports in its hello replies, named as in
 * `replSetGetStatus` (`stateStr`). Derived by the simulator from the shared configuration and the
 * member's runtime flags; immutable.
 */
enum class MemberState {
    /** Writable primary: `isWritablePrimary: true`, `electionId`, `primary` = itself (SDAM: RSPrimary). */
    PRIMARY,

    /** Data-bearing secondary, hidden ones included (SDAM: RSSecondary). */
    SECONDARY,

    /** `arbiterOnly: true` member (SDAM: RSArbiter). */
    ARBITER,

    /** In the set but neither primary nor secondary, e.g. recovering (SDAM: RSOther). */
    RECOVERING,

    /** Not in the current configuration: answers `isreplicaset: true` without setName (SDAM: RSGhost). */
    REMOVED,
}
