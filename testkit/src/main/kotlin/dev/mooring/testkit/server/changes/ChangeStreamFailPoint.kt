package dev.mooring.testkit.server.changes

import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonString

/**
 * mongod's `failGetMoreAfterCursorCheckout` fail point: a getMore fails with `data.errorCode` (or
 * closes the connection with `data.closeConnection`) after its cursor was checked out, so the
 * error carries the labels mongod gives a change stream's getMore error:
 * `ResumableChangeStreamError` for the codes mongod deems resumable. Served as the equivalent
 * `failCommand` on getMore. Pure.
 */
object ChangeStreamFailPoint {
    const val NAME: String = "failGetMoreAfterCursorCheckout"

    /** The codes mongod labels `ResumableChangeStreamError` (network, not-primary, shutdown, stale-routing, retry errors). */
    private val RESUMABLE = setOf(6, 7, 89, 91, 189, 262, 9001, 10107, 11600, 11602, 13435, 13436, 63, 150, 13388, 234, 133, 43)

    /** [command] (`{configureFailPoint: failGetMoreAfterCursorCheckout, mode, data}`) as a failCommand fail point. */
    fun asFailCommand(command: BsonDocument): BsonDocument {
        val data = command["data"]?.takeIf { it.isDocument }?.asDocument()?.clone() ?: BsonDocument()
        data["failCommands"] = BsonArray(listOf(BsonString("getMore")))
        val code = data["errorCode"]?.takeIf { it.isNumber }?.asNumber()?.intValue()
        if (code != null && !data.containsKey("errorLabels")) {
            data["errorLabels"] = BsonArray(if (code in RESUMABLE) listOf(BsonString("ResumableChangeStreamError")) else emptyList())
        }
        return BsonDocument("configureFailPoint", BsonString("failCommand")).append("mode", command["mode"] ?: BsonString("off")).append("data", data)
    }
}
