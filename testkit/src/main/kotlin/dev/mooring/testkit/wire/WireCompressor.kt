package dev.mooring.testkit.wire

import com.github.luben.zstd.Zstd
import org.xerial.snappy.Snappy
import java.io.ByteArrayOutputStream
import java.util.zip.Deflater
import java.util.zip.Inflater

/**
 * The test kit's own compressors for OP_COMPRESSED (OP_COMPRESSED.md: compressor ids 1 snappy,
 * 2 zlib, 3 zstd), written apart from the client's so a compression bug cannot hide on both sides.
 * Stateless; thread-safe.
 */
internal enum class WireCompressor(val id: Int, val wireName: String) {
    SNAPPY(1, "snappy") {
        override fun compress(bytes: ByteArray, zlibLevel: Int): ByteArray = Snappy.compress(bytes)
        override fun decompress(bytes: ByteArray, size: Int): ByteArray = Snappy.uncompress(bytes)
    },
    ZLIB(2, "zlib") {
        override fun compress(bytes: ByteArray, zlibLevel: Int): ByteArray {
            val deflater = Deflater(zlibLevel)
            try {
                deflater.setInput(bytes)
                deflater.finish()
                val out = ByteArrayOutputStream(bytes.size / 2 + 64)
                val chunk = ByteArray(8192)
                while (!deflater.finished()) out.write(chunk, 0, deflater.deflate(chunk))
                return out.toByteArray()
            } finally {
                deflater.end()
            }
        }

        override fun decompress(bytes: ByteArray, size: Int): ByteArray {
            val inflater = Inflater()
            try {
                inflater.setInput(bytes)
                val out = ByteArray(size)
                var n = 0
                while (n < size && !inflater.finished()) {
                    val got = inflater.inflate(out, n, size - n)
                    if (got == 0 && (inflater.needsInput() || inflater.needsDictionary())) break
                    n += got
                }
                if (n != size || !inflater.finished()) throw WireProtocolException("zlib data inflates to other than the $size bytes announced")
                return out
            } finally {
                inflater.end()
            }
        }
    },
    ZSTD(3, "zstd") {
        override fun compress(bytes: ByteArray, zlibLevel: Int): ByteArray = Zstd.compress(bytes)
        override fun decompress(bytes: ByteArray, size: Int): ByteArray = Zstd.decompress(bytes, size)
    },
    ;

    /** [bytes] compressed ([zlibLevel] applies to zlib only; -1 is zlib's default). */
    abstract fun compress(bytes: ByteArray, zlibLevel: Int = -1): ByteArray

    /** [bytes] decompressed into exactly [size] bytes, or a [WireProtocolException]. */
    abstract fun decompress(bytes: ByteArray, size: Int): ByteArray

    companion object {
        /** The names a hello may ask for, in the kit's order. */
        val NAMES: List<String> = entries.map { it.wireName }

        fun byName(name: String): WireCompressor? = entries.firstOrNull { it.wireName == name }

        fun byId(id: Int): WireCompressor? = entries.firstOrNull { it.id == id }
    }
}
