package dev.mooring.cmap.internal.command

import org.bson.BsonDocument

/**
 * A connection that takes the [CommandRequestObserver] as an argument. [MonitoredConnection] calls
 * it instead of installing the observer as a coroutine context element, which costs a
 * `withContext` (a scope coroutine, its parent-job handle, a combined context) on every command.
 * Same contract as `Connection.command` otherwise.
 */
internal interface ObservedCommand {
    /** Runs [command] on [database], reporting the request to [observer] just before it is written. */
    suspend fun command(database: String, command: BsonDocument, observer: CommandRequestObserver): BsonDocument
}
