package dev.mooring.cmap

/**
 * Metadata of a library wrapping Mooring (handshake.md "Supporting Wrapping Libraries"),
 * appended to the handshake's `client.driver` and `client.platform` fields with a `|`
 * delimiter. Empty strings count as unset. Immutable.
 *
 * @throws IllegalArgumentException when the name is blank or a field contains `|`.
 */
public class DriverInfo(name: String, version: String? = null, platform: String? = null) {
    /** The wrapping library's name. */
    public val name: String = name

    /** Its version, or null. */
    public val version: String? = version?.takeIf { it.isNotEmpty() }

    /** Its platform description, or null. */
    public val platform: String? = platform?.takeIf { it.isNotEmpty() }

    init {
        require(name.isNotBlank()) { "DriverInfo name must not be blank" }
        for (f in listOfNotNull(name, version, platform)) {
            require('|' !in f) { "DriverInfo fields must not contain '|': '$f'" }
        }
    }

    override fun equals(other: Any?): Boolean =
        other is DriverInfo && other.name == name && other.version == version && other.platform == platform

    override fun hashCode(): Int = listOf(name, version, platform).hashCode()

    override fun toString(): String = "DriverInfo(name=$name, version=$version, platform=$platform)"
}
