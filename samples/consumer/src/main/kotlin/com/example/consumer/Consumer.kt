package com.example.consumer

import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings

/**
 * Links against the published Mooring API the way an application does: parses a connection
 * string, starts a cluster (its monitors try a loopback port where nothing listens) and closes it.
 * Prints `consumer ok` when everything on the runtime classpath loaded.
 */
fun main() {
    val settings = MongoClusterSettings.fromUri("mongodb://127.0.0.1:9/?maxPoolSize=7&serverSelectionTimeoutMS=1000")
    check(settings.pool.maxPoolSize == 7) { "maxPoolSize not parsed: ${settings.pool}" }
    MongoCluster(settings).use { cluster ->
        println("topology: ${cluster.topology.value.type}")
    }
    println("consumer ok")
}
