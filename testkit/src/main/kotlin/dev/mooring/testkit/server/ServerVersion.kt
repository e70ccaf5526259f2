package dev.mooring.testkit.server

/**
 * A MongoDB release (`major.minor.patch`), ordered. A test kit server simulates the first release
 * of the wire version it reports ([ofWireVersion]: wire version 9 is 4.4.0), so a behaviour a
 * later patch release brought (4.4.14's) is absent from it. Immutable.
 */
internal data class ServerVersion(val major: Int, val minor: Int, val patch: Int = 0) : Comparable<ServerVersion> {
    override fun compareTo(other: ServerVersion): Int =
        compareValuesBy(this, other, ServerVersion::major, ServerVersion::minor, ServerVersion::patch)

    override fun toString() = "$major.$minor.$patch"

    companion object {
        /** The releases that introduced each wire version from 6 (MongoDB 3.6) on, in order. */
        private val RELEASES = listOf(
            6 to ServerVersion(3, 6), 7 to ServerVersion(4, 0), 8 to ServerVersion(4, 2), 9 to ServerVersion(4, 4),
            10 to ServerVersion(4, 7), 11 to ServerVersion(4, 8), 12 to ServerVersion(4, 9), 13 to ServerVersion(5, 0),
            14 to ServerVersion(5, 1), 15 to ServerVersion(5, 2), 16 to ServerVersion(5, 3), 17 to ServerVersion(6, 0),
            18 to ServerVersion(6, 1), 19 to ServerVersion(6, 2), 20 to ServerVersion(6, 3), 21 to ServerVersion(7, 0),
            22 to ServerVersion(7, 1), 23 to ServerVersion(7, 2), 24 to ServerVersion(7, 3), 25 to ServerVersion(8, 0),
            26 to ServerVersion(8, 1), 27 to ServerVersion(8, 2),
        )

        /**
         * The first release reporting [maxWireVersion]: below 6 taken as 3.6 (the oldest the test
         * kit's tables know), past the newest listed as the newest.
         */
        fun ofWireVersion(maxWireVersion: Int): ServerVersion =
            RELEASES.lastOrNull { it.first <= maxWireVersion }?.second ?: RELEASES.first().second
    }
}
