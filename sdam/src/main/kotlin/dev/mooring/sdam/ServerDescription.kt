package dev.mooring.sdam

import dev.mooring.cmap.ConnectionDescription
import dev.mooring.events.ServerAddress
import dev.mooring.sdam.internal.HelloParser
import org.bson.BsonDocument
import org.bson.types.ObjectId

/**
 * The client's view of one server, built from its most recent hello (or legacy hello) outcome.
 * Immutable: safe to share between threads; a new check produces a new instance.
 *
 * Equality ([equals]) is the spec's *server description equality*: the same [address] and
 * equal values of the fields marked (=) in the SDAM spec — [error] (its message), [type],
 * [minWireVersion], [maxWireVersion], [me], [hosts], [passives], [arbiters], [tags], [setName],
 * [electionId], [setVersion], [primary], [logicalSessionTimeoutMinutes], [topologyVersion] and
 * [iscryptd]. Round-trip times, [lastUpdateTimeMillis], [lastWriteDate], [opTime], [serviceId],
 * the size limits ([maxBsonObjectSize], [maxMessageSizeBytes], [maxWriteBatchSize]) and [cause] are left out, so a re-check that only moves the RTT publishes no event.
 *
 * Host names in [me], [hosts], [passives], [arbiters] and [primary] are lower case
 * (see [ServerAddress]).
 */
public data class ServerDescription(
    /** The address the client connects to (not [me]). */
    val address: ServerAddress,
    /** The server's type; [ServerType.UNKNOWN] until a check succeeds. */
    val type: ServerType = ServerType.UNKNOWN,
    /** A description of the last error related to this server, or null. Part of equality. */
    val error: String? = null,
    /** The exception behind [error], when there is one. Not part of equality. */
    val cause: Throwable? = null,
    /** The (averaged) round-trip time of the hello call in milliseconds; null while Unknown. */
    val roundTripTimeMillis: Double? = null,
    /** The minimum round-trip time over the last samples in milliseconds; null while Unknown. */
    val minRoundTripTimeMillis: Double? = null,
    /** `lastWrite.lastWriteDate` of the hello reply in milliseconds since the epoch, or null. */
    val lastWriteDate: Long? = null,
    /** `lastWrite.opTime` of the hello reply (opaque), or null. */
    val opTime: BsonDocument? = null,
    /** The lowest wire version the server speaks (default 0). */
    val minWireVersion: Int = 0,
    /** The highest wire version the server speaks (default 0). */
    val maxWireVersion: Int = 0,
    /** The address the server was configured with in its replica set (`me`), or null. */
    val me: ServerAddress? = null,
    /** The server's view of the set's electable members. */
    val hosts: Set<ServerAddress> = emptySet(),
    /** The server's view of the set's priority-zero members. */
    val passives: Set<ServerAddress> = emptySet(),
    /** The server's view of the set's arbiters. */
    val arbiters: Set<ServerAddress> = emptySet(),
    /** The member's tags (empty when none). */
    val tags: Map<String, String> = emptyMap(),
    /** The replica set name, or null. */
    val setName: String? = null,
    /** The election id of a member that believes it is primary, or null. */
    val electionId: ObjectId? = null,
    /** The replica set config version, or null. */
    val setVersion: Long? = null,
    /** The server's opinion of who the primary is, or null. */
    val primary: ServerAddress? = null,
    /** When the server was last checked, in milliseconds of a monotonic clock; null = never ("infinity ago"). */
    val lastUpdateTimeMillis: Long? = null,
    /** The server's `logicalSessionTimeoutMinutes`, or null. */
    val logicalSessionTimeoutMinutes: Int? = null,
    /** The server's topologyVersion (from a hello reply or a state change error), or null. */
    val topologyVersion: TopologyVersion? = null,
    /** True when the server is a mongocryptd; null when the reply did not say. */
    val iscryptd: Boolean? = null,
    /** The `serviceId` a server behind a load balancer reports, or null. */
    val serviceId: ObjectId? = null,
    /** True when the server answered `helloOk: true` (it understands the `hello` command). */
    val helloOk: Boolean = false,
    /** The hello reply's `maxBsonObjectSize` (the largest document it takes; 16 MiB when not said). Not part of equality. */
    val maxBsonObjectSize: Int = ConnectionDescription.DEFAULT_MAX_BSON_OBJECT_SIZE,
    /** The hello reply's `maxMessageSizeBytes` (48 MB when not said). Not part of equality. */
    val maxMessageSizeBytes: Int = ConnectionDescription.DEFAULT_MAX_MESSAGE_SIZE_BYTES,
    /** The hello reply's `maxWriteBatchSize` (100,000 when not said). Not part of equality. */
    val maxWriteBatchSize: Int = ConnectionDescription.DEFAULT_MAX_WRITE_BATCH_SIZE,
) {
    /** True when the last check succeeded ([type] is neither Unknown nor PossiblePrimary). */
    public val isAvailable: Boolean get() = type.isKnown

    /** True for the primary of a replica set. */
    public val isPrimary: Boolean get() = type == ServerType.RS_PRIMARY

    /** True for a secondary of a replica set. */
    public val isSecondary: Boolean get() = type == ServerType.RS_SECONDARY

    /** True when the server can serve application data (see [ServerType.isDataBearing]). */
    public val isDataBearing: Boolean get() = type.isDataBearing

    /** [hosts], [passives] and [arbiters] together, in that order. */
    public val allMembers: Set<ServerAddress> get() = LinkedHashSet<ServerAddress>(hosts).apply { addAll(passives); addAll(arbiters) }

    /** Spec equality: same address and equal (=) fields (see the class documentation). */
    override fun equals(other: Any?): Boolean {
        if (this === other) return true
        if (other !is ServerDescription) return false
        return address == other.address && type == other.type && error == other.error &&
            minWireVersion == other.minWireVersion && maxWireVersion == other.maxWireVersion &&
            me == other.me && hosts == other.hosts && passives == other.passives && arbiters == other.arbiters &&
            tags == other.tags && setName == other.setName && electionId == other.electionId &&
            setVersion == other.setVersion && primary == other.primary &&
            logicalSessionTimeoutMinutes == other.logicalSessionTimeoutMinutes &&
            topologyVersion == other.topologyVersion && iscryptd == other.iscryptd
    }

    override fun hashCode(): Int {
        var h = address.hashCode()
        h = 31 * h + type.hashCode()
        h = 31 * h + (setName?.hashCode() ?: 0)
        h = 31 * h + hosts.hashCode()
        h = 31 * h + (electionId?.hashCode() ?: 0)
        h = 31 * h + (topologyVersion?.hashCode() ?: 0)
        return h
    }

    override fun toString(): String = buildString {
        append("ServerDescription(").append(address).append(", ").append(type.specName)
        if (setName != null) append(", setName=").append(setName)
        if (hosts.isNotEmpty()) append(", hosts=").append(hosts)
        if (primary != null) append(", primary=").append(primary)
        if (electionId != null) append(", electionId=").append(electionId)
        if (setVersion != null) append(", setVersion=").append(setVersion)
        if (topologyVersion != null) append(", topologyVersion=").append(topologyVersion)
        append(", wire=").append(minWireVersion).append("..").append(maxWireVersion)
        if (roundTripTimeMillis != null) append(", rtt=").append(roundTripTimeMillis)
        if (error != null) append(", error=").append(error)
        append(')')
    }

    public companion object {
        /**
         * A default description of type Unknown for [address], carrying an optional [error]
         * message, its [cause], and the [topologyVersion] of a state change error.
         */
        @JvmStatic
        @JvmOverloads
        public fun unknown(
            address: ServerAddress,
            error: String? = null,
            cause: Throwable? = null,
            topologyVersion: TopologyVersion? = null,
        ): ServerDescription = ServerDescription(address = address, error = error, cause = cause, topologyVersion = topologyVersion)

        /**
         * Builds the description of a successful hello or legacy hello call to [address]:
         * `isWritablePrimary` is read before `ismaster`; a reply without `ok: 1` gives Unknown;
         * host names are lower-cased. A reply whose fields have the wrong types (or hold
         * unparseable host names) gives an Unknown description whose [error] says why — a
         * monitor never crashes on a bad reply. Pure: no I/O, no clock.
         */
        @JvmStatic
        @JvmOverloads
        public fun fromHello(
            address: ServerAddress,
            reply: BsonDocument,
            roundTripTimeMillis: Double? = null,
            minRoundTripTimeMillis: Double? = null,
            lastUpdateTimeMillis: Long? = null,
        ): ServerDescription = HelloParser.parse(address, reply, roundTripTimeMillis, minRoundTripTimeMillis, lastUpdateTimeMillis)
    }
}
