package dev.mooring.events

/**
 * One structured log message as a [LogSink] receives it: the spec's [component], [level] and
 * human-readable [message], and the spec's key-value pairs in [data] (without `message`; null
 * values are left out). Documents in [data] are relaxed extended JSON strings, already
 * truncated to [LoggingSettings.maxDocumentLength]. Immutable.
 */
public class LogMessage(
    /** The component that logged the message. */
    public val component: LogComponent,
    /** The message's severity. */
    public val level: LogLevel,
    /** The spec's message text, for example `Connection pool created`. */
    public val message: String,
    /** The structured key-value pairs, in the spec's order. */
    public val data: Map<String, Any>,
) {
    override fun toString(): String = "LogMessage(${component.specName}, ${level.specName}, $message, $data)"
}

/**
 * Receives the structured log messages of one client (see [LoggingSettings.sink]).
 *
 * Called synchronously on the thread that logs — often under a pool's or the topology's lock —
 * in the order the messages happen, so an implementation must be quick, must not block and
 * must not call back into the client; it must be thread-safe, because several threads log at
 * once. An exception it throws is caught and written to SLF4J; it never breaks the caller.
 * After the client closed, no more messages arrive.
 */
public fun interface LogSink {
    /** Receives [message]. */
    public fun log(message: LogMessage)
}
