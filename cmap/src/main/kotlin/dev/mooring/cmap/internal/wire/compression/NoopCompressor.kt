package dev.mooring.cmap.internal.wire.compression

import dev.mooring.cmap.internal.wire.WireFormatException

/** compressorId 0: the content is not compressed (the spec keeps it for testing). Stateless; thread-safe. */
internal object NoopCompressor : Compressor {
    /** The compressorId of noop. */
    internal const val ID: Int = 0
    override val name: String = "noop"
    override val id: Int = ID

    override fun maxCompressedLength(length: Int): Int = length

    override fun compressInto(source: ByteArray, offset: Int, length: Int, dest: ByteArray, destOffset: Int): Int {
        System.arraycopy(source, offset, dest, destOffset, length)
        return length
    }

    override fun decompress(source: ByteArray, uncompressedSize: Int): ByteArray {
        if (source.size != uncompressedSize) {
            throw WireFormatException("noop OP_COMPRESSED holds ${source.size} bytes, uncompressedSize says $uncompressedSize")
        }
        return source.copyOf()
    }
}
