package dev.mooring.sdam

import dev.mooring.cmap.ClientWireVersion

/**
 * The wire protocol range this client speaks (SDAM clientMinWireVersion / clientMaxWireVersion),
 * as defined once in [ClientWireVersion], plus the SDAM-specific version thresholds. Constants.
 */
internal object WireVersions {
    /** The oldest wire version supported ([ClientWireVersion.MIN]). */
    public const val CLIENT_MIN_WIRE_VERSION: Int = ClientWireVersion.MIN

    /** The newest wire version supported ([ClientWireVersion.MAX]). */
    public const val CLIENT_MAX_WIRE_VERSION: Int = ClientWireVersion.MAX

    /** The wire version of MongoDB 4.4, the first to take a `comment` on getMore (crud.md). */
    public const val MONGODB_4_4: Int = 9

    /** The wire version of MongoDB 6.0, from which primaries are ordered by electionId before setVersion. */
    public const val MONGODB_6_0: Int = 17

    /** The wire version of MongoDB 8.2, the first to take a helper command's `rawData` (crud.md). */
    public const val MONGODB_8_2: Int = 27
}
