package dev.mooring.driver.readme

import de.bwaldvogel.mongo.MongoServer
import de.bwaldvogel.mongo.backend.memory.MemoryBackend
import dev.mooring.driver.database
import dev.mooring.driver.gridfs.gridFSBucket
import dev.mooring.sdam.MongoCluster
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import java.io.File
import java.nio.file.Files
import kotlin.random.Random

/** README "GridFS: files as streams": the upload and download as written there, against mongo-java-server. */
class ReadmeGridFSSpec : FunSpec({
    timeout = 120_000

    test("the README's GridFS example copies a file through a bucket") {
        val server = MongoServer(MemoryBackend())
        server.bind("127.0.0.1", 0)
        val cluster = MongoCluster("mongodb://127.0.0.1:${server.localAddress.port}/?serverSelectionTimeoutMS=5000")
        val dir = Files.createTempDirectory("readme-gridfs").toFile()
        val original = Random(7).nextBytes(600_000)
        File(dir, "clip.mp4").writeBytes(original)
        try {
            fun File(name: String) = File(dir, name)
            // --- as in the README
            val bucket = cluster.database("media").gridFSBucket()
            val id = File("clip.mp4").inputStream().use { bucket.upload("clip.mp4", it) }
            File("copy.mp4").outputStream().use { out -> bucket.download(id).collect { out.write(it) } }
            // ---
            File("copy.mp4").readBytes() shouldBe original
        } finally {
            cluster.closeSuspending()
            server.shutdownNow()
            dir.deleteRecursively()
        }
    }
})
