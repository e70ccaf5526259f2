package dev.mooring.cmap.internal.command

import org.bson.BsonDocument

/**
 * A connection that reports its requests to a [CommandRequestObserver], taken as an argument (the
 * one way the observer travels: [MonitoredConnection] and the pool's wrapper pass it down to
 * Mooring's own socket connection). Same contract as `Connection.command` otherwise.
 */
internal interface ObservedCommand {
    /** Runs [command] on [database], reporting the request to [observer] just before it is written. */
    suspend fun command(database: String, command: BsonDocument, observer: CommandRequestObserver): BsonDocument
}
