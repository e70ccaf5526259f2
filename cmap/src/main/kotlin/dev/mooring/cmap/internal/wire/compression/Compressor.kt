package dev.mooring.cmap.internal.wire.compression

/**
 * One OP_COMPRESSED algorithm (OP_COMPRESSED.md). Implementations are stateless and
 * thread-safe.
 */
internal interface Compressor {
    /** The name used in the handshake's `compression` list and the `compressors` option. */
    val name: String

    /** The compressorId byte of OP_COMPRESSED. */
    val id: Int

    /** Compresses [source] (a message without its 16-byte header). */
    fun compress(source: ByteArray): ByteArray

    /**
     * Decompresses [source] into exactly [uncompressedSize] bytes. Throws
     * [dev.mooring.cmap.internal.wire.WireFormatException] when the data is corrupt or does not
     * decompress to exactly that many bytes.
     */
    fun decompress(source: ByteArray, uncompressedSize: Int): ByteArray
}
