package dev.mooring.driver.gridfs

import dev.mooring.driver.FindOptions
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldBeEmpty
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe
import io.kotest.matchers.types.shouldBeInstanceOf
import java.io.ByteArrayInputStream
import io.ktor.utils.io.ByteReadChannel
import kotlinx.coroutines.flow.map
import kotlinx.coroutines.flow.toList
import org.bson.BsonBinary
import org.bson.BsonDocument
import org.bson.BsonDouble
import org.bson.BsonInt32
import org.bson.BsonInt64
import org.bson.BsonString
import org.bson.types.ObjectId
import org.bson.BsonObjectId

/** GridFS uploads, downloads and file management (gridfs-spec.md) against mongo-java-server. */
class GridFSBucketSpec : FunSpec({
    timeout = 120_000

    test("round trips: empty, one byte, less than, exactly and more than a chunk, several chunks from arrays of any size") {
        GridFSFixture.run {
            val bucket = database.gridFSBucket(GridFSBucketOptions(chunkSizeBytes = 4))
            for (size in listOf(0, 1, 3, 4, 5, 8, 10, 37)) {
                val data = bytes(size)
                // arrays that do not line up with chunks: 3 bytes, then the rest
                val id = bucket.upload("f$size", source(data.copyOfRange(0, minOf(3, size)), data.copyOfRange(minOf(3, size), size)))
                bucket.download(id).concat() shouldBe data
                val file = bucket.find(BsonDocument("_id", id)).toList().single()
                file.length shouldBe size.toLong()
                file.chunkSize shouldBe 4
                file.filename shouldBe "f$size"
                file.document["length"].shouldBeInstanceOf<BsonInt64>()
                file.document["chunkSize"].shouldBeInstanceOf<BsonInt32>()
                file.document.containsKey("md5") shouldBe false
                file.document.containsKey("metadata") shouldBe false
                val stored = chunks.find(BsonDocument("files_id", id), FindOptions(sort = BsonDocument("n", BsonInt32(1)))).toList()
                stored.map { it.getInt32("n").value } shouldBe (0 until (size + 3) / 4).toList()
                // every chunk full but the last, which is only as large as needed; no empty chunk
                stored.map { it.getBinary("data").data.size } shouldBe (0 until (size + 3) / 4).map { n -> minOf(4, size - 4 * n) }
            }
        }
    }

    test("the download emits one array per chunk; metadata and a custom id are stored") {
        GridFSFixture.run {
            val bucket = database.gridFSBucket(GridFSBucketOptions(chunkSizeBytes = 4))
            val id = BsonString("my-id")
            bucket.upload("a", source(bytes(10)), GridFSUploadOptions(id = id, metadata = BsonDocument("owner", BsonString("ana")))) shouldBe id
            bucket.download(id).map { it.size }.toList() shouldContainExactly listOf(4, 4, 2)
            bucket.find(BsonDocument("metadata.owner", BsonString("ana"))).toList().single().metadata shouldBe BsonDocument("owner", BsonString("ana"))
        }
    }

    test("InputStream and ByteReadChannel sources") {
        GridFSFixture.run {
            val bucket = database.gridFSBucket(GridFSBucketOptions(chunkSizeBytes = 1000))
            val data = bytes(4321)
            val a = bucket.upload("stream", ByteArrayInputStream(data))
            bucket.download(a).concat() shouldBe data
            val b = bucket.upload("channel", ByteReadChannel(data), GridFSUploadOptions(chunkSizeBytes = 300))
            bucket.download(b).concat() shouldBe data
            bucket.find(BsonDocument("_id", b)).toList().single().chunkSize shouldBe 300
        }
    }

    test("indexes: created before the first write on an empty bucket, unique on chunks; the check runs once per bucket") {
        GridFSFixture.run {
            val bucket = database.gridFSBucket()
            bucket.upload("a", source(bytes(1)))
            bucket.upload("b", source(bytes(1)))
            started("find").count { it.command.getString("find").value == "fs.files" } shouldBe 1
            started("listIndexes").size shouldBe 2
            started("createIndexes").size shouldBe 2
            files.listIndexes().toList().map { it["key"] } shouldContainExactly listOf(BsonDocument("_id", BsonInt32(1)), BsonDocument("filename", BsonInt32(1)).append("uploadDate", BsonInt32(1)))
            val chunksIndex = chunks.listIndexes().toList().single { it["key"] == BsonDocument("files_id", BsonInt32(1)).append("n", BsonInt32(1)) }
            chunksIndex["unique"]?.asBoolean()?.value shouldBe true
        }
    }

    test("indexes: an existing index with other numeric types is not created again; a non-empty files collection is not indexed") {
        GridFSFixture.run {
            files.createIndex(BsonDocument("filename", BsonDouble(1.0)).append("uploadDate", BsonInt64(1)))
            chunks.createIndex(BsonDocument("files_id", BsonDouble(1.0)).append("n", BsonDouble(1.0)), dev.mooring.driver.IndexOptions(unique = true))
            recorder.clear()
            database.gridFSBucket().upload("a", source(bytes(1)))
            started("listIndexes").size shouldBe 2
            started("createIndexes").shouldBeEmpty()

            val other = database.gridFSBucket(GridFSBucketOptions(bucketName = "other"))
            database.collection("other.files").insertOne(BsonDocument("x", BsonInt32(1)))
            recorder.clear()
            other.upload("b", source(bytes(1)))
            started("listIndexes").shouldBeEmpty()
            started("createIndexes").shouldBeEmpty()
        }
    }

    test("downloadByName: revisions from the oldest (0, 1, …) and the newest (-1, -2, …); a missing name and a missing revision are told apart") {
        GridFSFixture.run {
            val bucket = database.gridFSBucket()
            for (i in 0 until 3) {
                val id = bucket.upload("r", source(byteArrayOf(i.toByte())))
                // distinct upload dates whatever the clock's resolution
                files.updateOne(BsonDocument("_id", id), dev.mooring.driver.Update.Operators(BsonDocument("\$set", BsonDocument("uploadDate", org.bson.BsonDateTime(1000L * i)))))
            }
            for ((revision, byte) in listOf(0 to 0, 1 to 1, 2 to 2, -1 to 2, -2 to 1, -3 to 0)) {
                bucket.downloadByName("r", revision).concat().toList() shouldBe listOf(byte.toByte())
            }
            bucket.downloadByName("r").concat().toList() shouldBe listOf(2.toByte())
            shouldThrow<GridFSRevisionNotFoundException> { bucket.downloadByName("r", 3).concat() }.revision shouldBe 3
            shouldThrow<GridFSRevisionNotFoundException> { bucket.downloadByName("r", -4).concat() }
            shouldThrow<GridFSFilenameNotFoundException> { bucket.downloadByName("nope").concat() }.filename shouldBe "nope"
            shouldThrow<GridFSFilenameNotFoundException> { bucket.downloadByName("nope", 2).concat() }
        }
    }

    test("a corrupt file fails the download after the good chunks: missing (also at the end), wrong size, extra chunk, no files document") {
        GridFSFixture.run {
            val bucket = database.gridFSBucket(GridFSBucketOptions(chunkSizeBytes = 4))
            val id = bucket.upload("c", source(bytes(10)))
            val received = ArrayList<ByteArray>()
            suspend fun failure(): Throwable = shouldThrow<MongoGridFSException> { received.clear(); bucket.download(id).collect { received += it } }

            chunks.deleteOne(BsonDocument("files_id", id).append("n", BsonInt32(2)))
            failure().shouldBeInstanceOf<GridFSChunkIsMissingException>().let { it.expectedN shouldBe 2; it.foundN shouldBe null }
            received.size shouldBe 2 // never silently short: the two good chunks, then the error

            chunks.insertOne(BsonDocument("files_id", id).append("n", BsonInt32(2)).append("data", BsonBinary(byteArrayOf(1))))
            failure().shouldBeInstanceOf<GridFSChunkIsWrongSizeException>().let { it.n shouldBe 2; it.expectedSize shouldBe 2; it.actualSize shouldBe 1 }

            chunks.deleteOne(BsonDocument("files_id", id).append("n", BsonInt32(2)))
            chunks.insertOne(BsonDocument("files_id", id).append("n", BsonInt32(2)).append("data", BsonBinary(byteArrayOf(8, 9))))
            bucket.download(id).concat() shouldBe bytes(10)
            chunks.insertOne(BsonDocument("files_id", id).append("n", BsonInt32(3)).append("data", BsonBinary(byteArrayOf(1))))
            failure().shouldBeInstanceOf<GridFSExtraChunkException>().n shouldBe 3

            chunks.deleteOne(BsonDocument("files_id", id).append("n", BsonInt32(1)))
            failure().shouldBeInstanceOf<GridFSChunkIsMissingException>().let { it.expectedN shouldBe 1; it.foundN shouldBe 2 }

            val missing = BsonObjectId(ObjectId())
            shouldThrow<GridFSFileNotFoundException> { bucket.download(missing).concat() }.id shouldBe missing
        }
    }

    test("an empty file: no chunk stored and no chunk query on download") {
        GridFSFixture.run {
            val bucket = database.gridFSBucket()
            val id = bucket.upload("empty", source())
            chunks.countDocuments() shouldBe 0
            recorder.clear()
            bucket.download(id).toList().shouldBeEmpty()
            started("find").map { it.command.getString("find").value } shouldContainExactly listOf("fs.files")
        }
    }

    test("delete (orphans too), deleteByName, rename, renameByName, drop") {
        GridFSFixture.run {
            val bucket = database.gridFSBucket(GridFSBucketOptions(chunkSizeBytes = 4))
            val a = bucket.upload("a", source(bytes(9)))
            val b1 = bucket.upload("b", source(bytes(5)))
            bucket.upload("b", source(bytes(6)))
            bucket.delete(a)
            chunks.countDocuments(BsonDocument("files_id", a)) shouldBe 0
            shouldThrow<GridFSFileNotFoundException> { bucket.delete(a) }
            // an orphan's chunks are deleted before the error
            files.deleteOne(BsonDocument("_id", b1))
            shouldThrow<GridFSFileNotFoundException> { bucket.delete(b1) }
            chunks.countDocuments(BsonDocument("files_id", b1)) shouldBe 0

            val c = bucket.upload("c", source(bytes(1)))
            bucket.rename(c, "c2")
            bucket.find(BsonDocument("_id", c)).toList().single().filename shouldBe "c2"
            shouldThrow<GridFSFileNotFoundException> { bucket.rename(BsonObjectId(ObjectId()), "x") }
            bucket.upload("c2", source(bytes(2)))
            bucket.renameByName("c2", "c3")
            bucket.find(BsonDocument("filename", BsonString("c3"))).toList().size shouldBe 2
            shouldThrow<GridFSFilenameNotFoundException> { bucket.renameByName("c2", "x") }
            bucket.deleteByName("c3")
            bucket.find(BsonDocument("filename", BsonString("c3"))).toList().shouldBeEmpty()
            shouldThrow<GridFSFilenameNotFoundException> { bucket.deleteByName("c3") }

            bucket.drop()
            database.listCollectionNames().filter { it.startsWith("fs.") }.shouldBeEmpty()
            recorder.clear()
            bucket.upload("again", source(bytes(1)))
            started("createIndexes").size shouldBe 2 // the index check runs again after a drop
        }
    }

    test("find passes its options to the files collection's find") {
        GridFSFixture.run {
            val bucket = database.gridFSBucket()
            for (name in listOf("x", "y", "z")) bucket.upload(name, source(bytes(1)))
            bucket.find(options = GridFSFindOptions(sort = BsonDocument("filename", BsonInt32(-1)), skip = 1, limit = 1, batchSize = 5)).toList()
                .map { it.filename } shouldContainExactly listOf("y")
            started("find").last().command.let {
                it["skip"] shouldBe BsonInt32(1)
                it["sort"] shouldBe BsonDocument("filename", BsonInt32(-1))
            }
        }
    }
})
