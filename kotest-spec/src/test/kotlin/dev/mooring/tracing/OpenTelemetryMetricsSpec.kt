package dev.mooring.tracing

import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.sdam.metrics.MooringOpenTelemetryMetrics
import dev.mooring.testkit.server.WireServer
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.opentelemetry.api.common.AttributeKey
import io.opentelemetry.sdk.OpenTelemetrySdk
import io.opentelemetry.sdk.metrics.SdkMeterProvider
import io.opentelemetry.sdk.metrics.data.MetricData
import io.opentelemetry.sdk.testing.exporter.InMemoryMetricReader
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.async
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.withTimeout
import org.bson.BsonDocument
import org.bson.BsonInt32

/** The `db.client.connection.*` metrics read from the pool's own state and its events. */
class OpenTelemetryMetricsSpec : FunSpec({
    test("count by state, pending requests, max, create, wait and use times") {
        WireServer.start().use { server ->
            val reader = InMemoryMetricReader.create()
            val sdk = OpenTelemetrySdk.builder().setMeterProvider(SdkMeterProvider.builder().registerMetricReader(reader).build()).build()
            val settings = MongoClusterSettings.fromUri("mongodb://${server.address}/?directConnection=true&maxPoolSize=3")
            MongoCluster(settings).use { cluster ->
                MooringOpenTelemetryMetrics(cluster, sdk).use {
                    repeat(3) { cluster.runCommand("admin", BsonDocument("ping", BsonInt32(1))) }
                    val pool = server.address.toString()
                    fun metrics(): Map<String, MetricData> = reader.collectAllMetrics().associateBy { it.name }
                    fun MetricData.longPoints() = longSumData.points.filter { it.attributes.get(AttributeKey.stringKey("db.client.connection.pool.name")) == pool }
                    val release = CompletableDeferred<Unit>()
                    coroutineScope {
                        val holder = async { cluster.withConnection { release.await() } }
                        // while one connection is held: one used, the others idle
                        withTimeout(10_000) {
                            while (metrics()["db.client.connection.count"]?.longPoints()
                                    ?.firstOrNull { it.attributes.get(AttributeKey.stringKey("db.client.connection.state")) == "used" }?.value != 1L) delay(20)
                        }
                        release.complete(Unit)
                        holder.await()
                    }
                    val m = metrics()
                    withClue(m.keys.toString()) {
                        m.getValue("db.client.connection.max").longPoints().single().value shouldBe 3L
                        m.getValue("db.client.connection.pending_requests").longPoints().single().value shouldBe 0L
                        m.getValue("db.client.connection.create_time").histogramData.points.single().count shouldBe 1L
                        m.getValue("db.client.connection.wait_time").histogramData.points.single().count shouldBe 4L
                        m.getValue("db.client.connection.use_time").histogramData.points.single().count shouldBe 4L
                        m.getValue("db.client.connection.count").longPoints()
                            .associate { it.attributes.get(AttributeKey.stringKey("db.client.connection.state")) to it.value } shouldBe mapOf("idle" to 1L, "used" to 0L)
                    }
                }
            }
        }
    }
})
