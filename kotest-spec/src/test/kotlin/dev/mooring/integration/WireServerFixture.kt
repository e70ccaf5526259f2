package dev.mooring.integration

import dev.mooring.cmap.ConnectionSettings
import dev.mooring.cmap.DefaultConnectionFactory
import dev.mooring.cmap.ExhaustConnection
import dev.mooring.testkit.server.WireServer

/** Runs [block] with a fresh [WireServer] and a factory for [settings]; closes both. */
suspend fun <T> withWireServer(
    settings: ConnectionSettings = ConnectionSettings(connectTimeoutMS = 10_000, socketTimeoutMS = 10_000),
    block: suspend (server: WireServer, factory: DefaultConnectionFactory) -> T,
): T {
    val server = WireServer.start()
    try {
        val factory = DefaultConnectionFactory(settings)
        try {
            return block(server, factory)
        } finally {
            factory.close()
        }
    } finally {
        server.close()
    }
}

/** A pooled-style connection, established. */
suspend fun DefaultConnectionFactory.open(server: WireServer, id: Long = 1, generation: Int = 0): ExhaustConnection =
    create(server.address, id, generation).also { it.establish() }
