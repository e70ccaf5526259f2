package dev.mooring.driver.gridfs

import dev.mooring.sdam.MongoOperationTimeoutException
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.flow
import org.bson.BsonDocument
import org.bson.BsonString

/**
 * client-side-operations-timeout.md "GridFS API": one timeoutMS bounds the whole upload or
 * download, not each command. The source and the collector below wait longer than the timeout
 * in all (each command alone is quick), so the operation must fail with the timeout error.
 */
class GridFSTimeoutSpec : FunSpec({
    timeout = 120_000

    test("an upload whose source outlasts timeoutMS fails at its next command with the timeout error; its chunks stay (a failed command, not an abort)") {
        GridFSFixture.run {
            val bucket = database.gridFSBucket(GridFSBucketOptions(chunkSizeBytes = 4)).withTimeout(300)
            val id = BsonString("slow")
            val source = flow {
                emit(bytes(4))
                delay(600)
                emit(bytes(4))
            }
            shouldThrow<MongoOperationTimeoutException> { bucket.upload("slow", source, GridFSUploadOptions(id = id)) }
            chunks.countDocuments(BsonDocument("files_id", id)) shouldBe 1
            files.countDocuments() shouldBe 0
        }
    }

    test("a download whose collector outlasts timeoutMS fails at the chunk cursor's next getMore with the timeout error") {
        GridFSFixture.run {
            val id = database.gridFSBucket().upload("big", flow { repeat(6) { emit(bytes(GridFSBucketOptions.DEFAULT_CHUNK_SIZE_BYTES)) } })
            val bucket = database.gridFSBucket().withTimeout(300)
            var received = 0
            shouldThrow<MongoOperationTimeoutException> {
                bucket.download(id).collect {
                    received++
                    delay(200)
                }
            }
            received shouldBe 4 // the first batch; the getMore for the rest is past the deadline
        }
    }
})
