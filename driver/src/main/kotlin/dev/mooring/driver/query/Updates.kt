package dev.mooring.driver.query

import dev.mooring.driver.Update
import dev.mooring.driver.internal.query.BsonValueEncoder
import dev.mooring.driver.internal.query.TypedBson
import kotlinx.serialization.modules.SerializersModule
import org.bson.BsonArray
import org.bson.BsonBoolean
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString
import org.bson.BsonValue
import org.bson.conversions.Bson

// Update operators on field paths, each a one-operator document (`{$set: {title: "x"}}`) that
// [update] combines into an Update.Operators. Values are encoded as the document class stores
// them. min, max, inc and mul take the field's own Comparable type (another type does not
// compile); for the others a widened value of another type fails with IllegalArgumentException
// naming the field when the update is rendered. Immutable, thread-safe results.

/**
 * The update of [operations] (each from [set], [inc], ...): one document with the fields of
 * every operation grouped by operator, in order: `update(set(Movie::title, "x"), inc(Movie::views, 1))`
 * is `{$set: {title: "x"}, $inc: {views: 1}}`. [IllegalArgumentException] when there are none, or
 * when an operation is not an update operator document.
 */
public fun update(vararg operations: Bson): Update.Operators {
    require(operations.isNotEmpty()) { "an update needs at least one operation" }
    val parts = operations.toList()
    return Update.Operators(
        TypedBson { m ->
            val out = BsonDocument()
            for (part in parts) {
                for ((operator, fields) in TypedBson.render(part, m)) {
                    require(operator.startsWith("\$") && fields is BsonDocument) { "not an update operator: {$operator: $fields}" }
                    (out.getOrPut(operator) { BsonDocument() } as BsonDocument).putAll(fields)
                }
            }
            out
        },
    )
}

/** `{$set: {field: value}}`. */
public fun <T, V> set(field: FieldPath<T, V>, value: V): Bson = update("\$set", field) { field.encode(value, it) }

/** `{$setOnInsert: {field: value}}`: set only when an upsert inserts the document. */
public fun <T, V> setOnInsert(field: FieldPath<T, V>, value: V): Bson = update("\$setOnInsert", field) { field.encode(value, it) }

/** `{$unset: {field: ""}}`: removes the field. */
public fun <T> unset(field: FieldPath<T, *>): Bson = update("\$unset", field) { BsonString("") }

/** `{$inc: {field: by}}`: adds [by] to the number field. */
public fun <T, V> inc(field: FieldPath<T, V?>, by: V): Bson where V : Number, V : Comparable<V> = update("\$inc", field) { field.encode(by, it) }

/** `{$mul: {field: by}}`: multiplies the number field by [by]. */
public fun <T, V> mul(field: FieldPath<T, V?>, by: V): Bson where V : Number, V : Comparable<V> = update("\$mul", field) { field.encode(by, it) }

/** `{$min: {field: value}}`: sets the field to [value] when [value] is smaller (or the field is missing). */
public fun <T, V : Comparable<V>> min(field: FieldPath<T, V?>, value: V): Bson = update("\$min", field) { field.encode(value, it) }

/** `{$max: {field: value}}`: sets the field to [value] when [value] is greater (or the field is missing). */
public fun <T, V : Comparable<V>> max(field: FieldPath<T, V?>, value: V): Bson = update("\$max", field) { field.encode(value, it) }

/** `{$push: {field: value}}`: appends [value] to the array field. */
public fun <T, E> push(field: FieldPath<T, Iterable<E>?>, value: E): Bson = update("\$push", field) { field.element(value, it) }

/** `{$push: {field: {$each: [values]}}}`: appends [values] to the array field. */
public fun <T, E> pushAll(field: FieldPath<T, Iterable<E>?>, values: Iterable<E>): Bson =
    update("\$push", field) { BsonDocument("\$each", field.elements(values, it)) }

/** `{$addToSet: {field: value}}`: adds [value] to the array field unless it is there. */
public fun <T, E> addToSet(field: FieldPath<T, Iterable<E>?>, value: E): Bson = update("\$addToSet", field) { field.element(value, it) }

/** `{$addToSet: {field: {$each: [values]}}}`: adds each of [values] that is not there. */
public fun <T, E> addAllToSet(field: FieldPath<T, Iterable<E>?>, values: Iterable<E>): Bson =
    update("\$addToSet", field) { BsonDocument("\$each", field.elements(values, it)) }

/** `{$pull: {field: value}}`: removes every element equal to [value]. */
public fun <T, E> pull(field: FieldPath<T, Iterable<E>?>, value: E): Bson = update("\$pull", field) { field.element(value, it) }

/** `{$pullAll: {field: [values]}}`: removes every element equal to one of [values]. */
public fun <T, E> pullAll(field: FieldPath<T, Iterable<E>?>, values: Iterable<E>): Bson =
    update("\$pullAll", field) { field.elements(values, it) }

/** `{$pop: {field: 1}}` (the last element), or `{$pop: {field: -1}}` with [first] (the first one). */
public fun <T> pop(field: FieldPath<T, Iterable<*>?>, first: Boolean = false): Bson = update("\$pop", field) { BsonInt32(if (first) -1 else 1) }

/** `{$rename: {field: newName}}`: the field is stored under [newName] (a dotted path of serial names). */
public fun <T> rename(field: FieldPath<T, *>, newName: String): Bson = update("\$rename", field) { BsonString(newName) }

/** `{$rename: {field: to}}`: the field moves to the path [to] (a field of the same type). */
public fun <T, V> rename(field: FieldPath<T, V>, to: FieldPath<T, V>): Bson = rename(field, to.name)

/** `{$currentDate: {field: true}}` (a BSON date), or `{$currentDate: {field: {$type: "timestamp"}}}` with [timestamp]. */
public fun <T> currentDate(field: FieldPath<T, *>, timestamp: Boolean = false): Bson =
    update("\$currentDate", field) { if (timestamp) BsonDocument("\$type", BsonString("timestamp")) else BsonBoolean.TRUE }

private fun update(operator: String, field: FieldPath<*, *>, value: (SerializersModule) -> BsonValue): Bson =
    TypedBson { m -> BsonDocument(operator, BsonDocument(field.name, value(m))) }

/** [value] as an element of this array field stores it. */
private fun FieldPath<*, *>.element(value: Any?, module: SerializersModule): BsonValue = elements(listOf(value), module).single()

/** [values] as elements of this array field store them. */
private fun FieldPath<*, *>.elements(values: Iterable<*>, module: SerializersModule): BsonArray =
    BsonValueEncoder.encodeElements(name, serializer, values.toList(), module)
