package dev.mooring.driver.query

import kotlin.reflect.KProperty1
import org.bson.BsonType
import org.bson.conversions.Bson

// The filters of Filters.kt on a document property directly (`Movie::year gt 2000`): the
// property's serial name and serializer, as `path(property)` gives them. Immutable, thread-safe
// results; the value types are checked as in Filters.kt.

/** `{field: value}`, see [FieldPath.eq]. */
public inline infix fun <reified T, V> KProperty1<T, V>.eq(value: V): Bson = path(this) eq value

/** `{field: {$ne: value}}`. */
public inline infix fun <reified T, V> KProperty1<T, V>.ne(value: V): Bson = path(this) ne value

/** `{field: {$gt: value}}`. */
public inline infix fun <reified T, V : Comparable<V>> KProperty1<T, V?>.gt(value: V): Bson = path(this) gt value

/** `{field: {$gte: value}}`. */
public inline infix fun <reified T, V : Comparable<V>> KProperty1<T, V?>.gte(value: V): Bson = path(this) gte value

/** `{field: {$lt: value}}`. */
public inline infix fun <reified T, V : Comparable<V>> KProperty1<T, V?>.lt(value: V): Bson = path(this) lt value

/** `{field: {$lte: value}}`. */
public inline infix fun <reified T, V : Comparable<V>> KProperty1<T, V?>.lte(value: V): Bson = path(this) lte value

/** `{field: {$in: [values]}}`. */
public inline infix fun <reified T, V> KProperty1<T, V>.`in`(values: Iterable<V>): Bson = path(this) `in` values

/** `{field: {$nin: [values]}}`. */
public inline infix fun <reified T, V> KProperty1<T, V>.nin(values: Iterable<V>): Bson = path(this) nin values

/** `{field: {$exists: exists}}`. */
public inline infix fun <reified T> KProperty1<T, *>.exists(exists: Boolean): Bson = path(this) exists exists

/** `{field: {$type: number}}`. */
public inline infix fun <reified T> KProperty1<T, *>.type(type: BsonType): Bson = path(this) type type

/** The string field matches [pattern] (a BSON regular expression with [options]). */
public inline fun <reified T> KProperty1<T, String?>.regex(pattern: String, options: String = ""): Bson = path(this).regex(pattern, options)

/** The string field matches [pattern]: `Movie::title regex "^The"`. */
public inline infix fun <reified T> KProperty1<T, String?>.regex(pattern: String): Bson = path(this).regex(pattern, "")

/** `{field: {$mod: [divisor, remainder]}}`. */
public inline fun <reified T> KProperty1<T, Number?>.mod(divisor: Long, remainder: Long): Bson = path(this).mod(divisor, remainder)

/** `{field: {$all: [values]}}`, each value encoded as an element of the array is stored. */
public inline infix fun <reified T, E> KProperty1<T, Iterable<E>?>.all(values: Iterable<E>): Bson = path(this) all values

/** `{field: {$elemMatch: filter}}`: `Movie::cast elemMatch (Person::name eq "Ada")`. */
public inline infix fun <reified T, E> KProperty1<T, Iterable<E>?>.elemMatch(filter: Bson): Bson = path(this) elemMatch filter

/** `{field: {$size: size}}`. */
public inline infix fun <reified T> KProperty1<T, Iterable<*>?>.size(size: Int): Bson = path(this) size size
