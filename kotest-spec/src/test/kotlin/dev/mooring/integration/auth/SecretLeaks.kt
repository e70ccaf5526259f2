package dev.mooring.integration.auth

import dev.mooring.events.EventListener
import dev.mooring.events.LogLevel
import dev.mooring.events.LogMessage
import dev.mooring.events.LogSink
import dev.mooring.events.LoggingSettings
import dev.mooring.events.MooringEvent
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings
import io.kotest.matchers.string.shouldNotContain
import org.bson.BsonDocument
import org.bson.BsonInt32
import java.util.Collections

/**
 * Runs a `ping` through a [MongoCluster] built from [settings] with every event and every log
 * message (all components, TRACE) captured, and asserts that none of them, nor the outcome's
 * messages, nor the settings' and credential's `toString()`, contains any of [secrets]. Returns
 * the failure, or null when the ping succeeded.
 */
suspend fun assertSecretsHidden(settings: MongoClusterSettings, secrets: List<String>): Throwable? {
    val logs = Collections.synchronizedList(ArrayList<LogMessage>())
    val events = Collections.synchronizedList(ArrayList<MooringEvent>())
    val logged = settings.copy(logging = LoggingSettings(LogSink { logs += it }, defaultLevel = LogLevel.TRACE))
    val failure = MongoCluster(logged, listOf(EventListener { events += it })).use { cluster ->
        try {
            cluster.runCommand("admin", BsonDocument("ping", BsonInt32(1)))
            null
        } catch (e: Exception) {
            e
        }
    }
    val texts = ArrayList<String>()
    synchronized(logs) { logs.forEach { texts += "${it.message} ${it.data}" } }
    synchronized(events) { events.forEach { texts += it.toString() } }
    generateSequence(failure as Throwable?) { it.cause }.forEach { texts += it.toString(); texts += it.message.orEmpty() }
    texts += settings.toString()
    texts += settings.connection.credential.toString()
    check(texts.size > 3) { "nothing was captured" }
    for (t in texts) for (s in secrets) t shouldNotContain s
    return failure
}
