@file:OptIn(ExperimentalTime::class)

package dev.mooring.samples

import dev.mooring.events.MooringException
import dev.mooring.samples.demo.Deployment
import dev.mooring.samples.service.BookmarkService
import dev.mooring.samples.service.ServiceArgs
import dev.mooring.samples.service.bookmarkModule
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings
import io.ktor.server.application.ApplicationStopped
import io.ktor.server.cio.CIO
import io.ktor.server.engine.embeddedServer
import kotlinx.coroutines.runBlocking
import kotlin.system.exitProcess
import kotlin.time.ExperimentalTime

/**
 * The Ktor service sample (`samples/ktor-service`; see `--help`): a bookmark API on Ktor's CIO
 * engine, stored through Mooring's typed collections, against the MongoDB named by the
 * connection string argument, or an embedded mongo-java-server when none is given (as
 * `samples/demo` does). Ctrl-C stops the server, then closes the cluster and the embedded server.
 */
fun main(args: Array<String>) {
    val parsed = try {
        ServiceArgs.parse(args)
    } catch (e: IllegalArgumentException) {
        System.err.println("ktor-service: ${e.message}")
        System.err.println(ServiceArgs.USAGE)
        exitProcess(2)
    }
    if (parsed.help) {
        println(ServiceArgs.USAGE)
        return
    }
    val deployment = parsed.uri?.let { Deployment.External(it) } ?: Deployment.Embedded.start()
    val cluster = try {
        MongoCluster(MongoClusterSettings.fromUri(deployment.uri))
    } catch (e: MooringException) {
        deployment.close()
        System.err.println("ktor-service: could not create the cluster: ${e.message}")
        exitProcess(1)
    }
    val service = try {
        runBlocking { BookmarkService.start(cluster, parsed.database) }
    } catch (e: Exception) {
        cluster.close()
        deployment.close()
        System.err.println("ktor-service: could not prepare the bookmarks collection: $e")
        exitProcess(1)
    }
    val server = embeddedServer(CIO, port = parsed.port, host = parsed.host) { bookmarkModule(service) }
    server.monitor.subscribe(ApplicationStopped) {
        service.close()
        cluster.close()
        deployment.close()
        System.err.println("ktor-service: stopped; cluster closed")
    }
    server.start(wait = false)
    val port = runBlocking { server.engine.resolvedConnectors().first().port }
    println("bookmarks on http://${parsed.host}:$port/bookmarks, health on /health (MongoDB: ${deployment.label}); Ctrl-C stops")
    Thread.currentThread().join()
}
