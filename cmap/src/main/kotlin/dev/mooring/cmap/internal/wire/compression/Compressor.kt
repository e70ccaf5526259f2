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

    /** The most bytes [compressInto] writes for [length] bytes of input. */
    fun maxCompressedLength(length: Int): Int

    /**
     * Compresses [length] bytes of [source] from [offset] into [dest] from [destOffset], which has
     * room for [maxCompressedLength] of them; returns the bytes written. Nothing is allocated in
     * proportion to the input (the message's own buffer and the wrapping's are the only copies).
     */
    fun compressInto(source: ByteArray, offset: Int, length: Int, dest: ByteArray, destOffset: Int): Int

    /**
     * Decompresses [source] into exactly [uncompressedSize] bytes. Throws
     * [dev.mooring.cmap.internal.wire.WireFormatException] when the data is corrupt or does not
     * decompress to exactly that many bytes.
     */
    fun decompress(source: ByteArray, uncompressedSize: Int): ByteArray
}
