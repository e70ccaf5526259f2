package dev.mooring.bench.workload

import dev.mooring.driver.database
import dev.mooring.driver.gridfs.GridFSBucketOptions
import dev.mooring.driver.gridfs.gridFSBucket
import dev.mooring.sdam.MongoCluster
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.runBlocking
import java.lang.management.ManagementFactory
import java.lang.management.MemoryType
import java.security.MessageDigest
import kotlin.random.Random

/**
 * Issue 33's bounded-memory check: `GridFsHeapCheck <mongodb uri> <MiB>` uploads MiB mebibytes of
 * pseudo-random bytes (generated one MiB at a time, never held whole) through Mooring's GridFS
 * bucket, downloads them, compares the SHA-256 of what was sent with what came back, and prints
 * the heap's peak (the sum of the heap pools' peak usage) for each phase. Run it with a small
 * `-Xmx` (for example 64m) against a server in another JVM: a streaming upload and download
 * pass; anything that held the file would fail with OutOfMemoryError.
 */
object GridFsHeapCheck {
    @JvmStatic
    fun main(args: Array<String>) {
        require(args.size == 2) { "usage: GridFsHeapCheck <mongodb uri> <MiB>" }
        val mib = args[1].toInt()
        val cluster = MongoCluster(args[0])
        try {
            runBlocking {
                val bucket = cluster.database("gridfs-heap").gridFSBucket(GridFSBucketOptions())
                bucket.drop()
                resetPeaks()
                val sent = MessageDigest.getInstance("SHA-256")
                val t0 = System.nanoTime()
                val id = bucket.upload("big.bin", flow {
                    val random = Random(42)
                    repeat(mib) {
                        val block = random.nextBytes(1 shl 20)
                        sent.update(block)
                        emit(block)
                    }
                })
                val uploadPeak = heapPeakMb()
                val t1 = System.nanoTime()
                resetPeaks()
                val received = MessageDigest.getInstance("SHA-256")
                var bytes = 0L
                bucket.download(id).collect { chunk ->
                    received.update(chunk)
                    bytes += chunk.size
                }
                val downloadPeak = heapPeakMb()
                val t2 = System.nanoTime()
                val same = sent.digest().contentEquals(received.digest())
                println(
                    "GridFS $mib MiB with -Xmx${Runtime.getRuntime().maxMemory() shr 20}m: upload ${"%.1f".format((t1 - t0) / 1e9)} s, " +
                        "heap peak $uploadPeak MB; download ${"%.1f".format((t2 - t1) / 1e9)} s, $bytes bytes, heap peak $downloadPeak MB; " +
                        "SHA-256 ${if (same) "equal" else "DIFFERENT"}",
                )
                bucket.drop()
                check(same && bytes == mib.toLong() shl 20) { "the download differs from the upload" }
            }
        } finally {
            runBlocking { cluster.closeSuspending() }
        }
    }

    private fun heapPools() = ManagementFactory.getMemoryPoolMXBeans().filter { it.type == MemoryType.HEAP }

    private fun resetPeaks() {
        System.gc()
        heapPools().forEach { it.resetPeakUsage() }
    }

    private fun heapPeakMb(): Long = heapPools().sumOf { it.peakUsage.used } shr 20
}
