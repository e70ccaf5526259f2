package dev.mooring.cmap.internal.wire.compression

/**
 * The compressors Mooring implements, looked up by handshake name or compressorId. Immutable;
 * thread-safe.
 */
internal object Compressors {
    /** Handshake names of every supported compressor. */
    internal val NAMES: List<String> = listOf(SnappyCompressor.NAME, ZlibCompressor.NAME, ZstdCompressor.NAME)

    /**
     * The compressor called [name] (`snappy`, `zlib`, `zstd`), with [zlibLevel] (-1..9) for zlib,
     * or null when the name is unknown.
     */
    internal fun byName(name: String, zlibLevel: Int = -1): Compressor? = when (name) {
        SnappyCompressor.NAME -> SnappyCompressor
        ZlibCompressor.NAME -> ZlibCompressor(zlibLevel)
        ZstdCompressor.NAME -> ZstdCompressor
        else -> null
    }

    /** The compressor with OP_COMPRESSED id [id] (0 = noop), or null when the id is unknown. */
    internal fun byId(id: Int): Compressor? = when (id) {
        NoopCompressor.ID -> NoopCompressor
        SnappyCompressor.ID -> SnappyCompressor
        ZlibCompressor.ID -> ZlibCompressor(-1)
        ZstdCompressor.ID -> ZstdCompressor
        else -> null
    }
}
