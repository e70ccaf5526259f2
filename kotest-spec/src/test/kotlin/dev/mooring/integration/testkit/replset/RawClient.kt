package dev.mooring.integration.testkit.replset

import dev.mooring.testkit.replset.SimulatedMember
import dev.mooring.testkit.replset.TopologyVersion
import dev.mooring.cmap.ConnectionSettings
import dev.mooring.cmap.DefaultConnectionFactory
import dev.mooring.cmap.ExhaustConnection
import dev.mooring.cmap.MongoCommandException
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonInt64
import java.util.concurrent.atomic.AtomicLong

/** A tiny test client over Mooring's own connection: raw commands against simulated members. */
internal class RawClient : AutoCloseable {
    private val factory = DefaultConnectionFactory(ConnectionSettings(connectTimeoutMS = 5_000, socketTimeoutMS = 10_000, appName = "rsim-spec"))
    private val ids = AtomicLong()
    private val open = java.util.concurrent.ConcurrentLinkedQueue<ExhaustConnection>()

    /** An established connection to [member]. */
    suspend fun connect(member: SimulatedMember): ExhaustConnection {
        val c = factory.create(member.address, ids.incrementAndGet(), 0)
        open += c
        c.establish()
        return c
    }

    /** Runs [cmd] on a fresh connection to [member]; the reply, or the command error's response. */
    suspend fun run(member: SimulatedMember, cmd: BsonDocument, db: String = "admin"): BsonDocument {
        val c = connect(member)
        try {
            return try {
                c.command(db, cmd)
            } catch (e: MongoCommandException) {
                e.response
            }
        } finally {
            c.close()
        }
    }

    override fun close() {
        open.forEach { it.close() }
        factory.close()
    }

    companion object {
        fun hello(): BsonDocument = BsonDocument("hello", BsonInt32(1))

        fun awaitableHello(tv: TopologyVersion, maxAwaitMS: Long): BsonDocument =
            hello().append("topologyVersion", tv.toBson()).append("maxAwaitTimeMS", BsonInt64(maxAwaitMS))
    }
}

internal fun BsonDocument.strings(key: String): List<String> = getArray(key).map { it.asString().value }

internal fun BsonDocument.tv(): TopologyVersion = TopologyVersion.parse(getDocument("topologyVersion"))

internal fun BsonDocument.code(): Int = getNumber("code", BsonInt32(0)).intValue()
