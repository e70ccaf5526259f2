package dev.mooring.bench.official

import com.mongodb.ConnectionString
import com.mongodb.MongoClientSettings
import com.mongodb.event.ConnectionCheckedOutEvent
import com.mongodb.event.ConnectionCreatedEvent
import com.mongodb.event.ConnectionPoolListener
import dev.mooring.bench.measure.CallerWindow
import java.util.concurrent.TimeUnit

/** Client settings shared by the sync and reactive benchmarks: the URI plus a pool listener feeding [window]. */
internal object OfficialClients {
    fun settings(uri: String, window: CallerWindow?): MongoClientSettings {
        val b = MongoClientSettings.builder().applyConnectionString(ConnectionString(uri))
        if (window != null) {
            b.applyToConnectionPoolSettings {
                it.addConnectionPoolListener(object : ConnectionPoolListener {
                    override fun connectionCheckedOut(event: ConnectionCheckedOutEvent) {
                        window.checkoutWait(event.getElapsedTime(TimeUnit.NANOSECONDS))
                    }

                    override fun connectionCreated(event: ConnectionCreatedEvent) {
                        window.connectionsCreated.incrementAndGet()
                    }
                })
            }
        }
        return b.build()
    }
}
