package dev.mooring.cmap.internal.wire.compression

import dev.mooring.cmap.internal.wire.WireFormatException
import java.util.zip.DataFormatException
import java.util.zip.Deflater
import java.util.zip.Inflater

/**
 * zlib (compressorId 2) via java.util.zip, at [level] -1..9 (-1 = zlib's default). Immutable;
 * thread-safe (a Deflater/Inflater per call).
 */
internal class ZlibCompressor(internal val level: Int = -1) : Compressor {
    // level: -1..9, checked with the settings (ConnectionSettingsRules), and by Deflater itself

    override val name: String = NAME
    override val id: Int = ID

    /** zlib's compressBound (deflate's worst case plus the zlib wrapping), as Deflater writes it. */
    override fun maxCompressedLength(length: Int): Int {
        val bound = length.toLong() + (length shr 12) + (length shr 14) + (length shr 25) + 13
        check(bound <= Int.MAX_VALUE) { "$length bytes are too many to compress in one message" }
        return bound.toInt()
    }

    override fun compressInto(source: ByteArray, offset: Int, length: Int, dest: ByteArray, destOffset: Int): Int {
        val deflater = Deflater(level)
        try {
            deflater.setInput(source, offset, length)
            deflater.finish()
            var n = 0
            while (!deflater.finished()) {
                val got = deflater.deflate(dest, destOffset + n, dest.size - destOffset - n)
                check(got > 0 || destOffset + n < dest.size) { "zlib output of $length bytes exceeded its bound" }
                n += got
            }
            return n
        } finally {
            deflater.end()
        }
    }

    override fun decompress(source: ByteArray, uncompressedSize: Int): ByteArray {
        val inflater = Inflater()
        try {
            inflater.setInput(source)
            val out = ByteArray(uncompressedSize)
            var n = 0
            while (n < uncompressedSize && !inflater.finished()) {
                val got = inflater.inflate(out, n, uncompressedSize - n)
                if (got == 0 && (inflater.needsInput() || inflater.needsDictionary())) break
                n += got
            }
            if (n != uncompressedSize) {
                throw WireFormatException("zlib data decompresses to $n bytes, uncompressedSize says $uncompressedSize")
            }
            if (!inflater.finished()) {
                // more output than announced
                val extra = inflater.inflate(ByteArray(1))
                if (extra > 0 || !inflater.finished()) {
                    throw WireFormatException("zlib data decompresses to more than uncompressedSize $uncompressedSize bytes")
                }
            }
            return out
        } catch (e: DataFormatException) {
            throw WireFormatException("corrupt zlib data: ${e.message}", e)
        } finally {
            inflater.end()
        }
    }

    override fun equals(other: Any?): Boolean = other is ZlibCompressor && other.level == level
    override fun hashCode(): Int = level
    override fun toString(): String = "ZlibCompressor(level=$level)"

    internal companion object {
        /** Handshake name. */
        internal const val NAME: String = "zlib"

        /** compressorId. */
        internal const val ID: Int = 2
    }
}
