package dev.mooring.driver.internal.gridfs

import dev.mooring.driver.MongoCollection
import dev.mooring.driver.MongoDatabase
import dev.mooring.driver.ReadConcern
import dev.mooring.driver.internal.MultiCommandDeadline
import dev.mooring.sdam.ReadPreference
import dev.mooring.sdam.WriteConcern
import org.bson.BsonDocument

/**
 * The files and chunks collections of one bucket with its concerns, each call's copy bounded by
 * what is left of its operation's [MultiCommandDeadline]. Immutable.
 */
internal class GridFSCollections(
    private val database: MongoDatabase,
    val bucketName: String,
    val readPreference: ReadPreference,
    val readConcern: ReadConcern,
    val writeConcern: WriteConcern,
    /** The bucket's own timeoutMS (null: the database's). */
    val timeoutMS: Long?,
) {
    private val files = configured(database.collection("$bucketName.files"))
    private val chunks = configured(database.collection("$bucketName.chunks"))

    private fun configured(c: MongoCollection<BsonDocument>) =
        c.withReadPreference(readPreference).withReadConcern(readConcern).withWriteConcern(writeConcern)

    /** A deadline for one bucket operation, started now: the bucket's timeoutMS, else the database's, else the cluster's. */
    fun deadline(): MultiCommandDeadline = MultiCommandDeadline(timeoutMS ?: database.timeoutMS ?: database.cluster.settings.timeoutMS)

    /** The files collection for the next command of the operation bounded by [deadline] ([MongoOperationTimeoutException][dev.mooring.sdam.MongoOperationTimeoutException] when it has passed). */
    fun files(deadline: MultiCommandDeadline): MongoCollection<BsonDocument> = files.withTimeout(deadline.next())

    /** The chunks collection for the next command of the operation bounded by [deadline]. */
    fun chunks(deadline: MultiCommandDeadline): MongoCollection<BsonDocument> = chunks.withTimeout(deadline.next())

    fun copy(
        readPreference: ReadPreference = this.readPreference,
        readConcern: ReadConcern = this.readConcern,
        writeConcern: WriteConcern = this.writeConcern,
        timeoutMS: Long? = this.timeoutMS,
    ): GridFSCollections = GridFSCollections(database, bucketName, readPreference, readConcern, writeConcern, timeoutMS)
}
