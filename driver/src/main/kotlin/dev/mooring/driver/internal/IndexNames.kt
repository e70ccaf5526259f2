package dev.mooring.driver.internal

import org.bson.BsonDocument
import org.bson.BsonValue

/** index-management.md "Index Name Generation": `field_direction` pairs joined by `_`. Stateless. */
internal object IndexNames {
    fun generate(keys: BsonDocument): String = keys.entries.joinToString("_") { (field, value) -> "${field}_${direction(value)}" }

    /** `1`, `-1`, `2dsphere`, `text`, ...: integral numbers without a fraction, strings as they are. */
    private fun direction(value: BsonValue): String = when {
        value.isInt32 -> value.asInt32().value.toString()
        value.isInt64 -> value.asInt64().value.toString()
        value.isDouble -> value.asDouble().value.let { if (it % 1.0 == 0.0 && kotlin.math.abs(it) < 1e15) it.toLong().toString() else it.toString() }
        value.isDecimal128 -> value.asDecimal128().value.bigDecimalValue().stripTrailingZeros().toPlainString()
        value.isString -> value.asString().value
        else -> value.toString()
    }
}
