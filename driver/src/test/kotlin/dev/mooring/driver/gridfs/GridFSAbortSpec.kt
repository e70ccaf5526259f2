package dev.mooring.driver.gridfs

import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.flow.flow
import org.bson.BsonDocument
import org.bson.BsonString

/** gridfs-spec.md "Aborting an upload": a failing source or a cancellation leaves no chunk behind. */
class GridFSAbortSpec : FunSpec({
    timeout = 120_000

    test("a source that fails: the chunks stored are deleted, no files document, the source's own error is rethrown") {
        GridFSFixture.run {
            val bucket = database.gridFSBucket(GridFSBucketOptions(chunkSizeBytes = 4))
            val boom = IllegalStateException("the source broke")
            val id = BsonString("broken")
            val source = flow {
                emit(bytes(9)) // two full chunks stored, one byte buffered
                throw boom
            }
            // the source's own error (coroutines' stack-trace recovery may hand over a copy of it)
            shouldThrow<IllegalStateException> { bucket.upload("x", source, GridFSUploadOptions(id = id)) }.message shouldBe boom.message
            started("insert").count { it.command.getString("insert").value == "fs.chunks" } shouldBe 2
            chunks.countDocuments(BsonDocument("files_id", id)) shouldBe 0
            files.countDocuments() shouldBe 0
        }
    }

    test("a cancelled upload deletes its chunks (NonCancellable) and stores no files document") {
        GridFSFixture.run {
            val bucket = database.gridFSBucket(GridFSBucketOptions(chunkSizeBytes = 4))
            val id = BsonString("cancelled")
            val twoChunksSent = CompletableDeferred<Unit>()
            val source = flow {
                emit(bytes(8))
                twoChunksSent.complete(Unit) // collected again only once both chunks were inserted
                awaitCancellation()
            }
            coroutineScope {
                val upload = async { bucket.upload("x", source, GridFSUploadOptions(id = id)) }
                twoChunksSent.await()
                chunks.countDocuments(BsonDocument("files_id", id)) shouldBe 2
                upload.cancelAndJoin()
            }
            chunks.countDocuments(BsonDocument("files_id", id)) shouldBe 0
            files.countDocuments() shouldBe 0
        }
    }
})
