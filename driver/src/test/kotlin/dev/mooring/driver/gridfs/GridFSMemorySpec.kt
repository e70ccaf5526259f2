package dev.mooring.driver.gridfs

import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.ints.shouldBeLessThanOrEqual
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.flow.take
import kotlinx.coroutines.flow.toList
import org.bson.BsonInt32

/**
 * Bounded memory, as behaviour: an upload never collects its source more than one chunk ahead of
 * the chunks inserted, and a download's cursor never holds more than one small batch of chunks
 * beyond what its collector took.
 */
class GridFSMemorySpec : FunSpec({
    timeout = 120_000

    test("upload: the source is collected at most one chunk ahead of the inserts") {
        GridFSFixture.run {
            val chunkSize = 1024
            val bucket = database.gridFSBucket(GridFSBucketOptions(chunkSizeBytes = chunkSize))
            bucket.upload("warm-up", flow { emit(bytes(1)) }) // the index check's commands are not counted
            var maxAhead = 0
            val chunksInserted = { started("insert").count { it.command.getString("insert").value == "fs.chunks" } }
            val before = chunksInserted()
            val source = flow {
                for (i in 0 until 200) {
                    maxAhead = maxOf(maxAhead, i - (chunksInserted() - before))
                    emit(bytes(chunkSize))
                }
            }
            bucket.upload("big", source)
            (chunksInserted() - before) shouldBe 200
            println("GridFS upload: the source ran at most $maxAhead chunk(s) ahead of the chunks inserted (200 chunks)")
            maxAhead shouldBeLessThanOrEqual 1
        }
    }

    test("download: the chunk cursor asks for small batches, and only as the collector takes chunks") {
        GridFSFixture.run {
            val chunkSize = 255 * 1024
            val bucket = database.gridFSBucket()
            val id = bucket.upload("big", flow { repeat(40) { emit(bytes(chunkSize)) } })
            recorder.clear()
            bucket.download(id).take(6).toList().size shouldBe 6
            val find = started("find").single { it.command.getString("find").value == "fs.chunks" }
            find.command["batchSize"] shouldBe BsonInt32(4)
            // 6 chunks taken: the first batch of 4 and one getMore of 4, no more
            started("getMore").size shouldBe 1
            started("getMore").single().command["batchSize"] shouldBe BsonInt32(4)
        }
    }
})
