package dev.mooring.testkit.server

import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonType
import org.bson.BsonValue

/**
 * The one home of the command fields a MongoDB release learned after 3.6: per command and field
 * path, the first release that knows it ([FIELDS]). A server simulating an older release
 * ([WireServer.maxWireVersion], see [ServerVersion.ofWireVersion]) refuses such a field before
 * its data engine sees the command, exactly as that release's parser of the command answers:
 *
 * - the IDL parsers (insert, update, delete and count, distinct always; find from 4.4): an
 *   unknown field is `BSON field '<command>.<path>' is an unknown field.` (40415), a field taken
 *   as a string only is `BSON field '<command>.<path>' is the wrong type '<type>', expected type
 *   'string'` (TypeMismatch, 14);
 * - find before 4.4 (its own parser): FailedToParse (9), `Failed to parse: <command>. Unrecognized
 *   field '<field>'.` or `Failed to parse: <field>: <value>. '<field>' field must be of BSON type string.`;
 * - aggregate before 5.0 (its own parser): FailedToParse (9) `unrecognized field '<field>'`, or
 *   TypeMismatch (14) `<field> must be a string, not a <type>`;
 * - findAndModify before 4.4 (its own parser, strict since 4.2): `BSON field '<field>' is an
 *   unknown field.` (51177).
 *
 * A `comment` of any type is a generic argument of every command from 4.4 on (count and distinct:
 * from 4.4.14); before, insert, update, delete and findAndModify do not know it and find,
 * aggregate, count and distinct take it as a string only. Fields older than 3.6 and generic
 * arguments are not listed: they are never refused. Pure.
 */
internal object ServerVersionFields {
    /** What a release older than a field's takes of it. */
    private sealed interface Before {
        /** The field is unknown. */
        data object Unknown : Before

        /** The field is known as a string only (a comment before it took any value). */
        data object StringOnly : Before
    }

    /**
     * A field of [command] at [path] (dot-separated; a write command's statement array names each
     * of its statements: `updates.hint`), known from [since] on, taken as [before] by older releases.
     */
    private class Field(val command: String, val path: String, val since: ServerVersion, val before: Before)

    private val V4_2 = ServerVersion(4, 2)
    private val V4_4 = ServerVersion(4, 4)
    private val V4_4_14 = ServerVersion(4, 4, 14)
    private val V5_0 = ServerVersion(5, 0)
    private val V8_0 = ServerVersion(8, 0)

    private val FIELDS = listOf(
        Field("insert", "comment", V4_4, Before.Unknown),
        Field("update", "comment", V4_4, Before.Unknown),
        Field("delete", "comment", V4_4, Before.Unknown),
        Field("findAndModify", "comment", V4_4, Before.Unknown),
        Field("find", "comment", V4_4, Before.StringOnly),
        Field("aggregate", "comment", V4_4, Before.StringOnly),
        Field("count", "comment", V4_4_14, Before.StringOnly),
        Field("distinct", "comment", V4_4_14, Before.StringOnly),
        Field("find", "allowDiskUse", V4_4, Before.Unknown),
        Field("update", "updates.hint", V4_2, Before.Unknown),
        Field("delete", "deletes.hint", V4_4, Before.Unknown),
        Field("findAndModify", "hint", V4_4, Before.Unknown),
        Field("update", "updates.sort", V8_0, Before.Unknown),
    )

    /** The refusal of [cmd] by a server simulating [version], or null when that release knows each field [cmd] gives. */
    fun refusal(cmd: BsonDocument, version: ServerVersion): BsonDocument? {
        val name = cmd.keys.firstOrNull() ?: return null
        for (field in FIELDS) {
            if (field.command != name || version >= field.since) continue
            val value = valuesAt(cmd, field.path.split('.')).firstOrNull { field.before == Before.Unknown || it.bsonType != BsonType.STRING }
            if (value != null) return refused(cmd, field, value, version)
        }
        return null
    }

    /** The values at [path] in [doc], through the arrays of documents on the way. */
    private fun valuesAt(doc: BsonDocument, path: List<String>): List<BsonValue> {
        val value = doc[path.first()] ?: return emptyList()
        if (path.size == 1) return listOf(value)
        val holders = if (value is BsonArray) value.filterIsInstance<BsonDocument>() else listOfNotNull(value as? BsonDocument)
        return holders.flatMap { valuesAt(it, path.drop(1)) }
    }

    /** [cmd]'s refusal of [field] (whose [value] the release does not take) as [version]'s parser of the command answers. */
    private fun refused(cmd: BsonDocument, field: Field, value: BsonValue, version: ServerVersion): BsonDocument {
        val leaf = field.path.substringAfterLast('.')
        val unknown = field.before == Before.Unknown
        return when {
            field.command == "find" && version < V4_4 -> if (unknown) {
                WireServer.error(FAILED_TO_PARSE, "FailedToParse", "Failed to parse: ${cmd.toJson()}. Unrecognized field '$leaf'.")
            } else {
                WireServer.error(FAILED_TO_PARSE, "FailedToParse", "Failed to parse: $leaf: ${shown(value)}. '$leaf' field must be of BSON type string.")
            }
            field.command == "aggregate" && version < V5_0 -> if (unknown) {
                WireServer.error(FAILED_TO_PARSE, "FailedToParse", "unrecognized field '$leaf'")
            } else {
                WireServer.error(TYPE_MISMATCH, "TypeMismatch", "$leaf must be a string, not a ${typeName(value)}")
            }
            field.command == "findAndModify" && version < V4_4 ->
                WireServer.error(FIND_AND_MODIFY_UNKNOWN_FIELD, "Location$FIND_AND_MODIFY_UNKNOWN_FIELD", "BSON field '$leaf' is an unknown field.")
            unknown -> WireServer.error(UNKNOWN_FIELD, "Location$UNKNOWN_FIELD", "BSON field '${field.command}.${field.path}' is an unknown field.")
            else -> WireServer.error(TYPE_MISMATCH, "TypeMismatch", "BSON field '${field.command}.${field.path}' is the wrong type '${typeName(value)}', expected type 'string'")
        }
    }

    /** [value] as JSON (a document or array as such, a scalar as its value). */
    private fun shown(value: BsonValue): String = when (value) {
        is BsonDocument -> value.toJson()
        else -> BsonDocument("v", value).toJson().substringAfter(':').trim().removeSuffix("}").trim()
    }

    /** mongod's name of [value]'s BSON type. */
    private fun typeName(value: BsonValue): String = when (value.bsonType) {
        BsonType.DOCUMENT -> "object"
        BsonType.ARRAY -> "array"
        BsonType.STRING -> "string"
        BsonType.INT32 -> "int"
        BsonType.INT64 -> "long"
        BsonType.DOUBLE -> "double"
        BsonType.DECIMAL128 -> "decimal"
        BsonType.BOOLEAN -> "bool"
        BsonType.NULL -> "null"
        BsonType.OBJECT_ID -> "objectId"
        BsonType.DATE_TIME -> "date"
        BsonType.BINARY -> "binData"
        BsonType.TIMESTAMP -> "timestamp"
        BsonType.REGULAR_EXPRESSION -> "regex"
        else -> value.bsonType.name.lowercase()
    }

    private const val FAILED_TO_PARSE = 9
    private const val TYPE_MISMATCH = 14
    private const val UNKNOWN_FIELD = 40415
    private const val FIND_AND_MODIFY_UNKNOWN_FIELD = 51177
}
