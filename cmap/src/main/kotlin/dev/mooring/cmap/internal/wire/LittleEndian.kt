package dev.mooring.cmap.internal.wire

/** The little-endian int32 at [at] of [bytes] (the caller has checked the bounds). The wire's and BSON's byte order. */
internal fun int32At(bytes: ByteArray, at: Int): Int =
    (bytes[at].toInt() and 0xff) or ((bytes[at + 1].toInt() and 0xff) shl 8) or
        ((bytes[at + 2].toInt() and 0xff) shl 16) or ((bytes[at + 3].toInt() and 0xff) shl 24)
