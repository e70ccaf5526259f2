package dev.mooring.sdam

/** The wire protocol range this client speaks (SDAM clientMinWireVersion / clientMaxWireVersion). */
public object WireVersions {
    /** The oldest wire version supported: 8, MongoDB 4.2. */
    public const val CLIENT_MIN_WIRE_VERSION: Int = 8

    /** The newest wire version supported: 27, MongoDB 8.2. */
    public const val CLIENT_MAX_WIRE_VERSION: Int = 27

    /** The MongoDB release that introduced [CLIENT_MIN_WIRE_VERSION], named in compatibility errors. */
    public const val CLIENT_MIN_MONGODB_VERSION: String = "4.2"

    /** The wire version of MongoDB 6.0, from which primaries are ordered by electionId before setVersion. */
    public const val MONGODB_6_0: Int = 17

    /** The name used in compatibility error messages. */
    public const val DRIVER_NAME: String = "Mooring"
}
