package dev.mooring.cmap

import dev.mooring.events.InternalMooringApi
import dev.mooring.events.ServerAddress

/**
 * The wire protocol range this client supports (SDAM's clientMinWireVersion/clientMaxWireVersion)
 * and the spec's compatibility messages. Constants; thread-safe. Not API ([InternalMooringApi]:
 * sdam's topology description applies the same compatibility rule).
 */
@InternalMooringApi
public object ClientWireVersion {
    /** The oldest server supported: wire version 8, MongoDB 4.2 (the specs dropped every pre-4.2 reference). */
    public const val MIN: Int = 8

    /** The newest wire version this client knows: 27 (MongoDB 8.2). */
    public const val MAX: Int = 27

    /** The MongoDB release that introduced [MIN]. */
    public const val MIN_MONGODB_VERSION: String = "4.2"

    /** The driver name used in the messages. */
    public const val DRIVER_NAME: String = "Mooring"

    /**
     * The SDAM "compatibilityError" for a server reporting [minWireVersion]..[maxWireVersion],
     * or null when the ranges overlap.
     */
    @JvmStatic
    public fun compatibilityError(address: ServerAddress, minWireVersion: Int, maxWireVersion: Int): String? = when {
        minWireVersion > MAX ->
            "Server at $address requires wire version $minWireVersion, but this version of $DRIVER_NAME only supports up to $MAX."
        maxWireVersion < MIN ->
            "Server at $address reports wire version $maxWireVersion, but this version of $DRIVER_NAME requires at least $MIN " +
                "(MongoDB $MIN_MONGODB_VERSION)."
        else -> null
    }
}
