package dev.mooring.sdam.internal.csot

import dev.mooring.cmap.internal.wire.AppendedCommand
import dev.mooring.cmap.MongoCommandException
import dev.mooring.sdam.MongoOperationTimeoutException
import dev.mooring.sdam.ServerDescription
import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonInt64
import kotlin.math.ceil

/**
 * The `timeoutMS` of one operation (client-side-operations-timeout.md), started when the
 * operation starts: [timeoutMS] null = not set (legacy behaviour), 0 = set but infinite,
 * positive = a deadline that bounds selection, checkout, every command and every retry.
 *
 * With a deadline, every command sent gets `maxTimeMS` = remaining - the selected server's
 * `minRoundTripTime` ([withMaxTimeMS]; a command that could not finish in time is not sent). With
 * timeoutMS set, a server's MaxTimeMSExpired (code 50, as a reply, a write error or a write
 * concern error) becomes a [MongoOperationTimeoutException] wrapping it ([translate],
 * [checkReply]). Immutable apart from the clock; thread-safe.
 */
internal class OperationTimeout private constructor(val timeoutMS: Long?, val deadlineNanos: Long?) {
    /** True when timeoutMS applies to this operation (the CSOT error semantics are on). */
    val isSet: Boolean get() = timeoutMS != null

    /** Milliseconds left before the deadline (never negative), or null without a deadline. */
    fun remainingMS(): Long? = deadlineNanos?.let { ((it - System.nanoTime()) / 1_000_000).coerceAtLeast(0) }

    /** True when the deadline has passed. */
    fun expired(): Boolean = deadlineNanos != null && System.nanoTime() - deadlineNanos >= 0

    /**
     * [command] with `maxTimeMS` set to the remaining time minus [server]'s minimum round trip
     * time (0 when the server is unknown); [command] itself without a deadline. Throws
     * [MongoOperationTimeoutException] (the command is not sent) when the remaining time does
     * not exceed that round trip time.
     */
    fun withMaxTimeMS(command: BsonDocument, server: ServerDescription?): BsonDocument {
        if (deadlineNanos == null) return command
        val maxTimeMS = serverTimeMS(if (command.isEmpty()) null else command.firstKey, server) ?: return command
        return AppendedCommand.append(command, "maxTimeMS", BsonInt64(maxTimeMS))
    }

    /**
     * The `maxTimeMS` of a tailable-await cursor's getMore (client-side-operations-timeout.md
     * "Tailable awaitData Cursors"): `min(`[maxAwaitTimeMS]`, remaining - minRoundTripTime)`, or
     * [maxAwaitTimeMS] itself without a deadline; fails as [withMaxTimeMS] when no time is left.
     */
    fun awaitTimeMS(maxAwaitTimeMS: Long, server: ServerDescription?): Long =
        serverTimeMS("getMore", server)?.let { minOf(maxAwaitTimeMS, it) } ?: maxAwaitTimeMS

    /** The remaining time minus [server]'s minimum round trip time, or null without a deadline; a timeout error when none is left. */
    private fun serverTimeMS(commandName: String?, server: ServerDescription?): Long? {
        val remaining = remainingMS() ?: return null
        val rtt = ceil(server?.minRoundTripTimeMillis ?: 0.0).toLong()
        if (remaining <= rtt) {
            throw MongoOperationTimeoutException(
                "timeoutMS=$timeoutMS expired before the command $commandName was sent: " +
                    "$remaining ms left, the server's minimum round trip time is $rtt ms",
            )
        }
        return remaining - rtt
    }

    /** [error] as the operation reports it: with timeoutMS set, a MaxTimeMSExpired command error becomes a timeout error. */
    fun translate(error: Throwable): Throwable =
        if (isSet && error is MongoCommandException && error.code == MAX_TIME_MS_EXPIRED) {
            MongoOperationTimeoutException("timeoutMS=$timeoutMS: the server ended the operation (MaxTimeMSExpired): ${error.message}", error)
        } else {
            error
        }

    /** [reply] itself, or with timeoutMS set a [MongoOperationTimeoutException] for a MaxTimeMSExpired write error or write concern error in it. */
    fun checkReply(reply: BsonDocument): BsonDocument {
        if (!isSet) return reply
        val writeError = (reply["writeErrors"] as? BsonArray)?.firstOrNull { isMaxTimeExpired(it as? BsonDocument) }
        val concernError = (reply["writeConcernError"] as? BsonDocument)?.takeIf { isMaxTimeExpired(it) }
        val found = writeError ?: concernError ?: return reply
        throw MongoOperationTimeoutException("timeoutMS=$timeoutMS: the server ended the operation (MaxTimeMSExpired): $found")
    }

    private fun isMaxTimeExpired(d: BsonDocument?): Boolean =
        d?.get("code")?.takeIf { it.isNumber }?.asNumber()?.intValue() == MAX_TIME_MS_EXPIRED

    companion object {
        /** The server's MaxTimeMSExpired error code (only the code is checked, as the spec requires). */
        const val MAX_TIME_MS_EXPIRED: Int = 50

        private val NOT_SET = OperationTimeout(null, null)

        /** Starts the timeout of an operation whose effective timeoutMS is [timeoutMS] (null: not set). */
        fun start(timeoutMS: Long?): OperationTimeout {
            require(timeoutMS == null || timeoutMS >= 0) { "timeoutMS must be >= 0, was $timeoutMS" }
            if (timeoutMS == null) return NOT_SET // immutable: one for every operation without timeoutMS
            val deadline = timeoutMS?.takeIf { it > 0 }?.let { System.nanoTime() + it * 1_000_000 }
            return OperationTimeout(timeoutMS, deadline)
        }
    }
}
