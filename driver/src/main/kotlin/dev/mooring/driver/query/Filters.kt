package dev.mooring.driver.query

import dev.mooring.driver.internal.query.BsonValueEncoder
import dev.mooring.driver.internal.query.TypedBson
import kotlinx.serialization.modules.SerializersModule
import org.bson.BsonArray
import org.bson.BsonBoolean
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonInt64
import org.bson.BsonRegularExpression
import org.bson.BsonType
import org.bson.BsonValue
import org.bson.conversions.Bson

// Query filters on field paths (query operators of the MongoDB manual). Each returns an immutable,
// thread-safe Bson whose values are encoded as the document class stores them, when rendered.
// Ordering operators (gt, gte, lt, lte) take a value of the field's own Comparable type, so
// `Movie::year gt "x"` does not compile. The others accept the field's type; Kotlin may widen it
// (`Movie::year eq "x"` infers Any), and such a value fails with IllegalArgumentException naming
// the field when the filter is rendered, before anything is sent.

/** `{field: value}`: the field equals [value] (an array field: also when it contains it). */
public infix fun <T, V> FieldPath<T, V>.eq(value: V): Bson = TypedBson { m -> BsonDocument(name, encode(value, m)) }

/** `{field: {$ne: value}}`. */
public infix fun <T, V> FieldPath<T, V>.ne(value: V): Bson = op("\$ne") { encode(value, it) }

/** `{field: {$gt: value}}`. */
public infix fun <T, V : Comparable<V>> FieldPath<T, V?>.gt(value: V): Bson = op("\$gt") { encode(value, it) }

/** `{field: {$gte: value}}`. */
public infix fun <T, V : Comparable<V>> FieldPath<T, V?>.gte(value: V): Bson = op("\$gte") { encode(value, it) }

/** `{field: {$lt: value}}`. */
public infix fun <T, V : Comparable<V>> FieldPath<T, V?>.lt(value: V): Bson = op("\$lt") { encode(value, it) }

/** `{field: {$lte: value}}`. */
public infix fun <T, V : Comparable<V>> FieldPath<T, V?>.lte(value: V): Bson = op("\$lte") { encode(value, it) }

/** `{field: {$in: [values]}}`: the field equals one of [values]. */
public infix fun <T, V> FieldPath<T, V>.`in`(values: Iterable<V>): Bson = op("\$in") { m -> BsonArray(values.map { encode(it, m) }) }

/** `{field: {$nin: [values]}}`: the field equals none of [values] (or is missing). */
public infix fun <T, V> FieldPath<T, V>.nin(values: Iterable<V>): Bson = op("\$nin") { m -> BsonArray(values.map { encode(it, m) }) }

/** `{field: {$exists: exists}}`. */
public infix fun <T> FieldPath<T, *>.exists(exists: Boolean): Bson = op("\$exists") { BsonBoolean.valueOf(exists) }

/** `{field: {$type: number}}`: the field holds a value of BSON [type]. */
public infix fun <T> FieldPath<T, *>.type(type: BsonType): Bson = op("\$type") { BsonInt32(type.value) }

/** `{field: {$regex: pattern, $options: options}}`, as a BSON regular expression: the string field matches [pattern]. */
public fun <T> FieldPath<T, String?>.regex(pattern: String, options: String = ""): Bson =
    TypedBson { BsonDocument(name, BsonRegularExpression(pattern, options)) }

/** [regex] without options: `Movie::title regex "^The"`. */
public infix fun <T> FieldPath<T, String?>.regex(pattern: String): Bson = regex(pattern, "")

/** `{field: {$mod: [divisor, remainder]}}`: the number field divided by [divisor] leaves [remainder]. */
public fun <T> FieldPath<T, Number?>.mod(divisor: Long, remainder: Long): Bson =
    op("\$mod") { BsonArray(listOf(BsonInt64(divisor), BsonInt64(remainder))) }

/** `{field: {$all: [values]}}`: the array field contains every one of [values]. */
public infix fun <T, E> FieldPath<T, Iterable<E>?>.all(values: Iterable<E>): Bson =
    op("\$all") { m -> BsonValueEncoder.encodeElements(name, serializer, values.toList(), m) }

/** `{field: {$elemMatch: filter}}`: an element of the array field matches [filter] (built on the element's properties). */
public infix fun <T, E> FieldPath<T, Iterable<E>?>.elemMatch(filter: Bson): Bson = op("\$elemMatch") { m -> TypedBson.render(filter, m) }

/** `{field: {$size: size}}`: the array field has [size] elements. */
public infix fun <T> FieldPath<T, Iterable<*>?>.size(size: Int): Bson = op("\$size") { BsonInt32(size) }

/** `{$and: [filters]}`: every filter matches ([IllegalArgumentException] when there are none). */
public fun and(vararg filters: Bson): Bson = logical("\$and", filters.toList())

/** `{$or: [filters]}`: at least one filter matches ([IllegalArgumentException] when there are none). */
public fun or(vararg filters: Bson): Bson = logical("\$or", filters.toList())

/** `{$nor: [filters]}`: no filter matches ([IllegalArgumentException] when there are none). */
public fun nor(vararg filters: Bson): Bson = logical("\$nor", filters.toList())

/** This filter and [other]: `(Movie::year gt 2000) and (Movie::title eq "x")`. */
public infix fun Bson.and(other: Bson): Bson = and(this, other)

/** This filter or [other]. */
public infix fun Bson.or(other: Bson): Bson = or(this, other)

/**
 * The negation of [filter]. A filter on one field becomes `{field: {$not: expression}}`
 * (`{year: {$not: {$gt: 2000}}}`; an equality `{field: v}` becomes `{field: {$not: {$eq: v}}}`);
 * any other filter becomes `{$nor: [filter]}`. Like `$not`, it also matches documents without the field.
 */
public fun not(filter: Bson): Bson = TypedBson { m -> negate(TypedBson.render(filter, m)) }

private fun negate(filter: BsonDocument): BsonDocument {
    val (field, value) = filter.entries.singleOrNull() ?: return BsonDocument("\$nor", BsonArray(listOf(filter)))
    if (field.startsWith("\$")) return BsonDocument("\$nor", BsonArray(listOf(filter)))
    val expression: BsonValue = when {
        value is BsonRegularExpression -> value
        value is BsonDocument && value.isNotEmpty() && value.keys.all { it.startsWith("\$") } -> value
        else -> BsonDocument("\$eq", value)
    }
    return BsonDocument(field, BsonDocument("\$not", expression))
}

private fun logical(operator: String, filters: List<Bson>): Bson {
    require(filters.isNotEmpty()) { "$operator needs at least one filter" }
    return TypedBson { m -> BsonDocument(operator, BsonArray(filters.map { TypedBson.render(it, m) })) }
}

/** `{field: {operator: value}}`. */
internal fun FieldPath<*, *>.op(operator: String, value: (SerializersModule) -> BsonValue): Bson =
    TypedBson { m -> BsonDocument(name, BsonDocument(operator, value(m))) }

/** [value] encoded as this field stores it. */
internal fun FieldPath<*, *>.encode(value: Any?, module: SerializersModule): BsonValue = BsonValueEncoder.encode(name, serializer, value, module)
