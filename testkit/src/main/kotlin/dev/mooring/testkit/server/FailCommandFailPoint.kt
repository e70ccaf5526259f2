package dev.mooring.testkit.server

import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString
import org.bson.BsonValue

/**
 * The `failCommand` fail point as mongod implements it: `mode` is `alwaysOn`, `off`,
 * `{times: n}`, `{skip: n}` or `{activationProbability: p}`; `data` holds `failCommands`,
 * `errorCode`, `errorLabels`, `closeConnection`, `blockConnection` + `blockTimeMS`, `appName`
 * and `writeConcernError`. Thread-safe: matching and the times/skip counters are synchronized.
 */
class FailCommandFailPoint private constructor(
    private val mode: Mode,
    private val failCommands: Set<String>,
    val errorCode: Int?,
    val errorLabels: BsonArray?,
    val closeConnection: Boolean,
    val blockTimeMS: Long?,
    val appName: String?,
    val writeConcernError: BsonDocument?,
) {
    /** A fail point's `mode`; counting modes are not thread-safe on their own (callers synchronize). */
    internal sealed interface Mode {
        data object AlwaysOn : Mode
        class Times(var left: Int) : Mode
        class Skip(var left: Int) : Mode
        class Probability(val p: Double) : Mode

        /** Counts one evaluation; true when the fail point fires. */
        fun fire(): Boolean = when (this) {
            AlwaysOn -> true
            is Times -> if (left > 0) { left--; true } else false
            is Skip -> if (left > 0) { left--; false } else true
            is Probability -> Math.random() < p
        }
    }

    /** True if this fail point fires for [commandName] on a connection with [connectionAppName]; counts the firing. */
    @Synchronized
    fun fires(commandName: String, connectionAppName: String?): Boolean {
        if (normalize(commandName) !in failCommands) return false
        if (appName != null && appName != connectionAppName) return false
        return mode.fire()
    }

    /** True once a `{times: n}` fail point is used up. */
    @get:Synchronized
    val exhausted: Boolean get() = (mode as? Mode.Times)?.left == 0

    /** The error document a firing fail point with [errorCode] sends. */
    fun errorReply(): BsonDocument {
        val d = errorDocument(errorCode ?: error("no errorCode"), "Failing command via 'failCommand' failpoint")
        errorLabels?.let { d["errorLabels"] = it }
        return d
    }

    companion object {
        /** `{ok: 0, errmsg, code, codeName?}` for [code]. */
        fun errorDocument(code: Int, errmsg: String): BsonDocument {
            val d = BsonDocument("ok", BsonInt32(0)).append("errmsg", BsonString(errmsg)).append("code", BsonInt32(code))
            ErrorCodes.nameOf(code)?.let { d["codeName"] = BsonString(it) }
            return d
        }

        /** `isMaster` and `ismaster` are one command, as on mongod. */
        internal fun normalize(name: String): String = if (name == "ismaster") "isMaster" else name

        /**
         * Parses a `{configureFailPoint: "failCommand", mode, data}` document. Returns null for mode
         * `off`. Throws [IllegalArgumentException] for anything mongod would reject.
         */
        fun parse(command: BsonDocument): FailCommandFailPoint? {
            val name = command["configureFailPoint"]?.takeIf { it.isString }?.asString()?.value
            require(name == "failCommand") { "only the failCommand fail point is supported, got $name" }
            val mode = parseMode(command["mode"] ?: throw IllegalArgumentException("missing mode")) ?: return null
            val data = command["data"]?.takeIf { it.isDocument }?.asDocument()
                ?: throw IllegalArgumentException("failCommand needs a data document")
            val commands = data["failCommands"]?.takeIf { it.isArray }?.asArray()
                ?.map { require(it.isString) { "failCommands must hold strings" }; normalize(it.asString().value) }?.toSet()
                ?: throw IllegalArgumentException("failCommand needs data.failCommands")
            val block = data["blockConnection"]?.let { it.isBoolean && it.asBoolean().value } == true
            val blockMs = data["blockTimeMS"]?.takeIf { it.isNumber }?.asNumber()?.longValue()
            require(!block || blockMs != null) { "blockConnection requires blockTimeMS" }
            return FailCommandFailPoint(
                mode = mode,
                failCommands = commands,
                errorCode = data["errorCode"]?.takeIf { it.isNumber }?.asNumber()?.intValue(),
                errorLabels = data["errorLabels"]?.takeIf { it.isArray }?.asArray(),
                closeConnection = data["closeConnection"]?.let { it.isBoolean && it.asBoolean().value } == true,
                blockTimeMS = if (block) blockMs else null,
                appName = data["appName"]?.takeIf { it.isString }?.asString()?.value,
                writeConcernError = data["writeConcernError"]?.takeIf { it.isDocument }?.asDocument(),
            )
        }

        /** A fail point's `mode`; null for `off`. */
        internal fun parseMode(v: BsonValue): Mode? = when {
            v.isString && v.asString().value == "alwaysOn" -> Mode.AlwaysOn
            v.isString && v.asString().value == "off" -> null
            v.isDocument && v.asDocument().containsKey("times") -> Mode.Times(intIn(v.asDocument(), "times"))
            v.isDocument && v.asDocument().containsKey("skip") -> Mode.Skip(intIn(v.asDocument(), "skip"))
            v.isDocument && v.asDocument().containsKey("activationProbability") ->
                Mode.Probability(v.asDocument()["activationProbability"]!!.asNumber().doubleValue())
            else -> throw IllegalArgumentException("invalid fail point mode $v")
        }

        private fun intIn(d: BsonDocument, key: String): Int {
            val n = d[key]?.takeIf { it.isNumber }?.asNumber()?.intValue() ?: throw IllegalArgumentException("mode.$key must be a number")
            require(n >= 0) { "mode.$key must not be negative" }
            return n
        }
    }
}

/** Code names for the server error codes tests use most. */
internal object ErrorCodes {
    private val names = mapOf(
        2 to "BadValue", 6 to "HostUnreachable", 7 to "HostNotFound", 11 to "UserNotFound", 18 to "AuthenticationFailed",
        50 to "MaxTimeMSExpired", 59 to "CommandNotFound", 89 to "NetworkTimeout", 91 to "ShutdownInProgress",
        189 to "PrimarySteppedDown", 262 to "ExceededTimeLimit", 9001 to "SocketException", 10107 to "NotWritablePrimary",
        11600 to "InterruptedAtShutdown", 11602 to "InterruptedDueToReplStateChange", 13435 to "NotPrimaryNoSecondaryOk",
        13436 to "NotPrimaryOrSecondary", 64 to "WriteConcernFailed", 100 to "UnsatisfiableWriteConcern",
        462 to "IngressRequestRateLimitExceeded", 11601 to "Interrupted", 112 to "WriteConflict", 251 to "NoSuchTransaction",
        24 to "LockTimeout", 79 to "UnknownReplWriteConcern", 244 to "TransactionAborted",
    )

    fun nameOf(code: Int): String? = names[code]
}
