package dev.mooring.cmap.internal.wire.compression

import com.github.luben.zstd.Zstd
import com.github.luben.zstd.ZstdException
import dev.mooring.cmap.internal.wire.WireFormatException

/** zstd (compressorId 3) via zstd-jni. Stateless; thread-safe. */
internal object ZstdCompressor : Compressor {
    /** Handshake name. */
    internal const val NAME: String = "zstd"

    /** compressorId. */
    internal const val ID: Int = 3
    override val name: String = NAME
    override val id: Int = ID

    override fun maxCompressedLength(length: Int): Int {
        val bound = Zstd.compressBound(length.toLong())
        check(bound <= Int.MAX_VALUE) { "$length bytes are too many to compress in one message" }
        return bound.toInt()
    }

    override fun compressInto(source: ByteArray, offset: Int, length: Int, dest: ByteArray, destOffset: Int): Int {
        // zstd's default level
        val n = Zstd.compressByteArray(dest, destOffset, dest.size - destOffset, source, offset, length, Zstd.defaultCompressionLevel())
        check(!Zstd.isError(n)) { "zstd could not compress $length bytes: ${Zstd.getErrorName(n)}" }
        return n.toInt()
    }

    override fun decompress(source: ByteArray, uncompressedSize: Int): ByteArray {
        val out = ByteArray(uncompressedSize)
        val n = try {
            Zstd.decompressByteArray(out, 0, out.size, source, 0, source.size)
        } catch (e: ZstdException) {
            throw WireFormatException("corrupt zstd data (or larger than uncompressedSize $uncompressedSize): ${e.message}", e)
        } catch (e: RuntimeException) {
            throw WireFormatException("corrupt zstd data: ${e.message}", e)
        }
        if (n.toInt() != uncompressedSize) {
            throw WireFormatException("zstd data decompresses to $n bytes, uncompressedSize says $uncompressedSize")
        }
        return out
    }
}
