package dev.mooring.integration.auth

import dev.mooring.cmap.MongoAuthenticationException
import dev.mooring.cmap.OidcCallback
import dev.mooring.events.EventListener
import dev.mooring.events.MooringEvent
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.sdam.MongoClusterSettingsBuilder
import dev.mooring.sdam.mongoClusterSettings
import dev.mooring.testkit.server.WireServer
import dev.mooring.testkit.server.auth.oidc.OidcIdentityProvider
import dev.mooring.testkit.server.auth.oidc.OidcServer
import io.kotest.assertions.fail
import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonString
import java.util.concurrent.CopyOnWriteArrayList

/** A test-kit server that requires MONGODB-OIDC, its identity provider, and helpers for clusters that authenticate to it. */
class OidcFixture private constructor(val server: WireServer, val idp: OidcIdentityProvider, val oidc: OidcServer) : AutoCloseable {
    override fun close() = server.close()

    /** Settings for a direct connection to [server] with MONGODB-OIDC and [properties]; retries off as the prose tests require. */
    fun settings(
        properties: Map<String, Any>,
        username: String? = null,
        host: String = server.address.toString(),
        extra: MongoClusterSettingsBuilder.() -> Unit = {},
    ): MongoClusterSettings = mongoClusterSettings {
        applySettings(MongoClusterSettings.fromUri("mongodb://$host/?directConnection=true&retryReads=false&retryWrites=false&heartbeatFrequencyMS=500&serverSelectionTimeoutMS=20000&appName=oidc-test"))
        credential(username, mechanism = "MONGODB-OIDC", mechanismProperties = properties)
        extra()
    }

    /** A cluster for [settings] that records every event in [events]. */
    fun cluster(settings: MongoClusterSettings, events: MutableList<MooringEvent> = CopyOnWriteArrayList()): MongoCluster =
        MongoCluster(settings, listOf(EventListener { events += it }))

    /** Runs a find, makes the next find fail with ReauthenticationRequired (391), and returns the reply of that next find. */
    suspend fun findAcrossReauthentication(settings: MongoClusterSettings, events: MutableList<MooringEvent> = CopyOnWriteArrayList()): BsonDocument =
        cluster(settings, events).use { c ->
            c.find()
            events.clear()
            failPoint("find", "errorCode" to 391)
            c.find()
        }

    fun failPoint(command: String, vararg data: Pair<String, Any>) {
        val d = BsonDocument("failCommands", BsonArray(listOf(BsonString(command))))
        for ((k, v) in data) d[k] = when (v) {
            is Int -> org.bson.BsonInt32(v)
            is Boolean -> org.bson.BsonBoolean(v)
            else -> BsonString(v.toString())
        }
        server.configureFailPoint(
            BsonDocument("configureFailPoint", BsonString("failCommand")).append("mode", BsonDocument("times", org.bson.BsonInt32(1))).append("data", d),
        )
    }

    companion object {
        suspend fun start(idp: OidcIdentityProvider = OidcIdentityProvider()): OidcFixture {
            val server = WireServer.start()
            val oidc = OidcServer(idp).also { it.install(server) }
            return OidcFixture(server, idp, oidc)
        }

        fun machine(callback: OidcCallback): Map<String, Any> = mapOf(OidcCallback.MACHINE_PROPERTY to callback)
        fun human(callback: OidcCallback, allowedHosts: List<String>? = null): Map<String, Any> =
            mapOf<String, Any>(OidcCallback.HUMAN_PROPERTY to callback) + (allowedHosts?.let { mapOf(OidcCallback.ALLOWED_HOSTS_PROPERTY to it) } ?: emptyMap())

        val find: BsonDocument get() = BsonDocument("find", BsonString("coll"))
        val insert: BsonDocument get() = BsonDocument("insert", BsonString("coll")).append("documents", BsonArray(listOf(BsonDocument("x", org.bson.BsonInt32(1)))))
    }
}

suspend fun MongoCluster.find(): BsonDocument = runRetryableRead("test", OidcFixture.find)
suspend fun MongoCluster.insert(): BsonDocument = runRetryableWrite("test", OidcFixture.insert)

/** The MONGODB-OIDC authentication failure behind [block]'s failure (possibly wrapped by server selection). */
suspend fun authFailure(block: suspend () -> Unit): MongoAuthenticationException {
    try {
        block()
    } catch (e: Throwable) {
        var t: Throwable? = e
        while (t != null) {
            if (t is MongoAuthenticationException) return t
            t = t.cause ?: t.suppressed.firstOrNull()
        }
        fail("expected a MongoAuthenticationException, got $e")
    }
    fail("expected the operation to fail")
}
