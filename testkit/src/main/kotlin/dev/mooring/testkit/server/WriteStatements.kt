package dev.mooring.testkit.server

import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonValue

/**
 * The write commands (`insert`, `update`, `delete`) run one statement at a time on the data
 * engine, and their replies put together as mongod sends them: `{n, nModified?, upserted?,
 * writeErrors?, ok: 1}`. A statement the engine refuses as a whole (an unknown query operator, a
 * bad update) is a write error at its index, not a failed command; an ordered write stops at its
 * first write error; `n` counts only what was applied (the engine counts an insert refused for a
 * duplicate key). Stateless.
 */
internal object WriteStatements {
    private val ARRAYS = mapOf("insert" to "documents", "update" to "updates", "delete" to "deletes")

    /** True when [cmd] is a write command this object splits. */
    fun handles(cmd: BsonDocument): Boolean = ARRAYS[cmd.firstKey]?.let { cmd[it] is BsonArray } == true

    /** Runs [cmd] statement by statement through [single] (a one-statement command's engine reply). */
    fun execute(cmd: BsonDocument, single: (BsonDocument) -> BsonDocument): BsonDocument {
        val kind = cmd.firstKey
        val array = ARRAYS.getValue(kind)
        val ordered = cmd["ordered"]?.let { it.isBoolean && !it.asBoolean().value } != true
        var n = 0
        var modified = 0
        val upserted = BsonArray()
        val writeErrors = BsonArray()
        for ((index, statement) in cmd.getArray(array).withIndex()) {
            val reply = single(cmd.clone().append(array, BsonArray(listOf(statement))))
            val errors = if (isOk(reply)) reply["writeErrors"] as? BsonArray ?: BsonArray() else BsonArray(listOf(asWriteError(reply)))
            errors.forEach { writeErrors.add(it.asDocument().clone().append("index", BsonInt32(index))) }
            if (errors.isEmpty()) {
                n += reply.getNumber("n", BsonInt32(0)).intValue()
                modified += reply.getNumber("nModified", BsonInt32(0)).intValue()
                (reply["upserted"] as? BsonArray)?.forEach { upserted.add(it.asDocument().clone().append("index", BsonInt32(index))) }
            } else if (ordered) {
                break
            }
        }
        val result = BsonDocument("n", BsonInt32(n))
        if (kind == "update") result["nModified"] = BsonInt32(modified)
        if (upserted.isNotEmpty()) result["upserted"] = upserted
        if (writeErrors.isNotEmpty()) result["writeErrors"] = writeErrors
        return result.append("ok", BsonInt32(1))
    }

    private fun isOk(reply: BsonDocument) = reply["ok"]?.takeIf { it.isNumber }?.asNumber()?.doubleValue() == 1.0

    /** A command-level error reply as a write error entry (`{index, code, codeName?, errmsg}`). */
    private fun asWriteError(reply: BsonDocument): BsonDocument {
        val error = BsonDocument("index", BsonInt32(0))
        for (key in listOf("code", "codeName", "errmsg", "errInfo")) reply[key]?.let { v: BsonValue -> error[key] = v }
        return error
    }
}
