package dev.mooring.driver.query

import kotlin.reflect.KProperty1
import org.bson.conversions.Bson

// The update operators of Updates.kt on a document property directly (`set(Movie::title, "x")`):
// the property's serial name and serializer, as `path(property)` gives them. Immutable,
// thread-safe results; the value types are checked as in Updates.kt.

/** `{$set: {field: value}}`. */
public inline fun <reified T, V> set(property: KProperty1<T, V>, value: V): Bson = set(path(property), value)

/** `{$setOnInsert: {field: value}}`. */
public inline fun <reified T, V> setOnInsert(property: KProperty1<T, V>, value: V): Bson = setOnInsert(path(property), value)

/** `{$unset: {field: ""}}`. */
public inline fun <reified T> unset(property: KProperty1<T, *>): Bson = unset(path(property))

/** `{$inc: {field: by}}`. */
public inline fun <reified T, V> inc(property: KProperty1<T, V?>, by: V): Bson where V : Number, V : Comparable<V> = inc(path(property), by)

/** `{$mul: {field: by}}`. */
public inline fun <reified T, V> mul(property: KProperty1<T, V?>, by: V): Bson where V : Number, V : Comparable<V> = mul(path(property), by)

/** `{$min: {field: value}}`. */
public inline fun <reified T, V : Comparable<V>> min(property: KProperty1<T, V?>, value: V): Bson = min(path(property), value)

/** `{$max: {field: value}}`. */
public inline fun <reified T, V : Comparable<V>> max(property: KProperty1<T, V?>, value: V): Bson = max(path(property), value)

/** `{$push: {field: value}}`. */
public inline fun <reified T, E> push(property: KProperty1<T, Iterable<E>?>, value: E): Bson = push(path(property), value)

/** `{$push: {field: {$each: [values]}}}`. */
public inline fun <reified T, E> pushAll(property: KProperty1<T, Iterable<E>?>, values: Iterable<E>): Bson = pushAll(path(property), values)

/** `{$addToSet: {field: value}}`. */
public inline fun <reified T, E> addToSet(property: KProperty1<T, Iterable<E>?>, value: E): Bson = addToSet(path(property), value)

/** `{$addToSet: {field: {$each: [values]}}}`. */
public inline fun <reified T, E> addAllToSet(property: KProperty1<T, Iterable<E>?>, values: Iterable<E>): Bson =
    addAllToSet(path(property), values)

/** `{$pull: {field: value}}`. */
public inline fun <reified T, E> pull(property: KProperty1<T, Iterable<E>?>, value: E): Bson = pull(path(property), value)

/** `{$pullAll: {field: [values]}}`. */
public inline fun <reified T, E> pullAll(property: KProperty1<T, Iterable<E>?>, values: Iterable<E>): Bson = pullAll(path(property), values)

/** `{$pop: {field: 1}}`, or `-1` with [first]. */
public inline fun <reified T> pop(property: KProperty1<T, Iterable<*>?>, first: Boolean = false): Bson = pop(path(property), first)

/** `{$rename: {field: newName}}`. */
public inline fun <reified T> rename(property: KProperty1<T, *>, newName: String): Bson = rename(path(property), newName)

/** `{$currentDate: {field: true}}`, or a timestamp with [timestamp]. */
public inline fun <reified T> currentDate(property: KProperty1<T, *>, timestamp: Boolean = false): Bson = currentDate(path(property), timestamp)
