package dev.mooring.driver.gridfs

import dev.mooring.testkit.SpecTests
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import java.io.BufferedInputStream
import java.io.File
import java.io.FileInputStream
import java.io.InputStream
import java.security.MessageDigest
import java.util.HexFormat
import java.util.zip.GZIPInputStream

/**
 * The benchmark suite's `gridfs_large.bin` (50 MiB, in `single_and_multi_document.tgz` of
 * `../shared/bench-data`, unpacked at run time into `target/bench-data`, never committed)
 * uploaded from an InputStream and downloaded as a flow: the SHA-256 digests of the file and of
 * the download are equal. Disabled when the archive is not there.
 */
class GridFSLargeFileSpec : FunSpec({
    timeout = 600_000

    test("gridfs_large.bin: upload, download, same SHA-256").config(enabledIf = { BenchData.archive.isFile }) {
        val file = BenchData.gridfsLarge()
        GridFSFixture.run {
            val bucket = database.gridFSBucket()
            val id = FileInputStream(file).use { bucket.upload("gridfs_large.bin", it) }
            val downloaded = MessageDigest.getInstance("SHA-256")
            var length = 0L
            bucket.download(id).collect { downloaded.update(it); length += it.size }
            length shouldBe file.length()
            val expected = FileInputStream(file).use { BenchData.sha256(it) }
            val actual = HexFormat.of().formatHex(downloaded.digest())
            println("GridFS gridfs_large.bin: ${file.length()} bytes, SHA-256 $expected, downloaded $actual")
            actual shouldBe expected
        }
    }
})

/** The benchmark datasets (`../shared/bench-data`, or `-Dbench.data.dir` / `BENCH_DATA_DIR`). */
object BenchData {
    val dir: File by lazy {
        val configured = System.getProperty("bench.data.dir") ?: System.getenv("BENCH_DATA_DIR")
        (if (configured != null) File(configured) else File(SpecTests.projectRoot(), "../shared/bench-data")).canonicalFile
    }

    val archive: File get() = File(dir, "single_and_multi_document.tgz")

    /** `gridfs_large.bin`, unpacked from [archive] into `target/bench-data` unless it is there already. */
    fun gridfsLarge(): File {
        val out = File("target/bench-data/gridfs_large.bin").absoluteFile
        if (out.isFile) return out
        out.parentFile.mkdirs()
        val partial = File(out.path + ".part")
        GZIPInputStream(BufferedInputStream(FileInputStream(archive))).use { tar ->
            check(copyEntry(tar, "single_and_multi_document/gridfs_large.bin", partial)) { "$archive has no gridfs_large.bin" }
        }
        check(partial.renameTo(out)) { "cannot move $partial to $out" }
        return out
    }

    /** Copies the tar entry [name] of [tar] into [to]; false when there is none (ustar headers, 512-byte blocks). */
    private fun copyEntry(tar: InputStream, name: String, to: File): Boolean {
        val header = ByteArray(512)
        while (true) {
            if (tar.readNBytes(header, 0, 512) < 512 || header.all { it == 0.toByte() }) return false
            val entry = String(header, 0, 100, Charsets.UTF_8).trimEnd('\u0000')
            val prefix = String(header, 345, 155, Charsets.UTF_8).trimEnd('\u0000')
            val size = String(header, 124, 12, Charsets.US_ASCII).trim('\u0000', ' ').toLong(8)
            val padded = (size + 511) / 512 * 512
            val full = if (prefix.isEmpty()) entry else "$prefix/$entry"
            if (full == name || full == "./$name") {
                to.outputStream().use { out ->
                    var left = size
                    val buf = ByteArray(64 * 1024)
                    while (left > 0) {
                        val n = tar.read(buf, 0, minOf(buf.size.toLong(), left).toInt())
                        check(n > 0) { "the archive ends inside $name" }
                        out.write(buf, 0, n)
                        left -= n
                    }
                }
                tar.skipNBytes(padded - size)
                return true
            }
            tar.skipNBytes(padded)
        }
    }

    fun sha256(input: InputStream): String {
        val digest = MessageDigest.getInstance("SHA-256")
        val buf = ByteArray(64 * 1024)
        while (true) {
            val n = input.read(buf)
            if (n < 0) break
            digest.update(buf, 0, n)
        }
        return HexFormat.of().formatHex(digest.digest())
    }
}
