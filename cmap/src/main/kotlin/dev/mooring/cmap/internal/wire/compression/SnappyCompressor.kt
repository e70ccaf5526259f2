package dev.mooring.cmap.internal.wire.compression

import dev.mooring.cmap.internal.wire.WireFormatException
import org.xerial.snappy.Snappy
import org.xerial.snappy.SnappyError
import java.io.IOException

/** snappy (compressorId 1) via snappy-java. Stateless; thread-safe. */
internal object SnappyCompressor : Compressor {
    /** Handshake name. */
    internal const val NAME: String = "snappy"

    /** compressorId. */
    internal const val ID: Int = 1
    override val name: String = NAME
    override val id: Int = ID

    override fun maxCompressedLength(length: Int): Int = Snappy.maxCompressedLength(length)

    override fun compressInto(source: ByteArray, offset: Int, length: Int, dest: ByteArray, destOffset: Int): Int =
        Snappy.compress(source, offset, length, dest, destOffset)

    override fun decompress(source: ByteArray, uncompressedSize: Int): ByteArray {
        val length = try {
            Snappy.uncompressedLength(source)
        } catch (e: IOException) {
            throw WireFormatException("corrupt snappy data: ${e.message}", e)
        } catch (e: SnappyError) {
            throw WireFormatException("corrupt snappy data: ${e.message}", e)
        }
        if (length != uncompressedSize) {
            throw WireFormatException("snappy data decompresses to $length bytes, uncompressedSize says $uncompressedSize")
        }
        return try {
            Snappy.uncompress(source)
        } catch (e: IOException) {
            throw WireFormatException("corrupt snappy data: ${e.message}", e)
        } catch (e: SnappyError) {
            throw WireFormatException("corrupt snappy data: ${e.message}", e)
        }
    }
}
