package dev.mooring.cmap.internal.wire

/**
 * The keys already read from one reply's bytes, so that a key repeated across the documents of a
 * batch is one `String` (its hash computed once) instead of a new `String` and byte array per
 * occurrence. A key is found by its bytes: the slot records where its first occurrence is in the
 * same array, and a hit compares the bytes there (never the hash alone). Open addressing with a
 * few probes; when those slots hold other keys the key is decoded as before, uncached. Per
 * decode, not thread-safe; keys only (values are not cached: a value repeated across documents
 * is the exception, a key the rule).
 */
internal class KeyCache private constructor(private val bytes: ByteArray, slots: Int) {
    private val keys = arrayOfNulls<String>(slots)
    private val at = IntArray(slots)
    private val length = IntArray(slots)
    private val mask = slots - 1

    /** The key `bytes[offset, offset + size)` (UTF-8, no NUL), whose [hash] is [hashOf]'s. */
    fun key(offset: Int, size: Int, hash: Int): String {
        var slot = (hash xor (hash ushr 15)) and mask
        repeat(PROBES) {
            val cached = keys[slot]
            if (cached == null) {
                val s = String(bytes, offset, size, Charsets.UTF_8)
                keys[slot] = s
                at[slot] = offset
                length[slot] = size
                return s
            }
            if (length[slot] == size && java.util.Arrays.equals(bytes, at[slot], at[slot] + size, bytes, offset, offset + size)) return cached
            slot = (slot + 1) and mask
        }
        return String(bytes, offset, size, Charsets.UTF_8)
    }

    internal companion object {
        private const val PROBES = 4

        /** Replies shorter than this decode without a cache (a command reply has few keys, each once). */
        const val MIN_REPLY_BYTES: Int = 2048

        /** A cache for a reply of [replyBytes] bytes: a slot per 256 bytes, 64 to 1,024; null below [MIN_REPLY_BYTES]. */
        fun forReply(bytes: ByteArray, replyBytes: Int): KeyCache? {
            if (replyBytes < MIN_REPLY_BYTES) return null
            val slots = Integer.highestOneBit((replyBytes / 256).coerceIn(64, 1024))
            return KeyCache(bytes, slots)
        }

        /** The hash [key] expects, accumulated one key byte at a time from 0. */
        @Suppress("NOTHING_TO_INLINE")
        inline fun hashOf(hash: Int, b: Byte): Int = 31 * hash + b
    }
}
