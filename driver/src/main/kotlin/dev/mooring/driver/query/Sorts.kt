package dev.mooring.driver.query

import dev.mooring.driver.internal.query.TypedBson
import kotlin.reflect.KProperty1
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.conversions.Bson

// Sort documents by serial field names, for FindOptions.sort and the findOneAndX options.
// Immutable, thread-safe results.

/** `{a: 1, b: 1}`: ascending by [fields], in order. */
public fun ascending(vararg fields: FieldPath<*, *>): Bson = directions(fields.toList(), 1)

/** `{a: -1, b: -1}`: descending by [fields], in order. */
public fun descending(vararg fields: FieldPath<*, *>): Bson = directions(fields.toList(), -1)

/** `{a: 1}` by the properties' serial names: `ascending(Movie::year, Movie::title)`. */
public inline fun <reified T> ascending(vararg properties: KProperty1<T, *>): Bson = ascending(*properties.map { path(it) }.toTypedArray())

/** `{a: -1}` by the properties' serial names. */
public inline fun <reified T> descending(vararg properties: KProperty1<T, *>): Bson = descending(*properties.map { path(it) }.toTypedArray())

/** One sort document of [sorts], in order (a later key for the same field wins): `orderBy(descending(Movie::year), ascending(Movie::title))`. */
public fun orderBy(vararg sorts: Bson): Bson = merged(sorts.toList())

private fun directions(fields: List<FieldPath<*, *>>, direction: Int): Bson =
    TypedBson { BsonDocument().apply { fields.forEach { put(it.name, BsonInt32(direction)) } } }

/** The fields of [parts], rendered with one module, in order, in one document. */
internal fun merged(parts: List<Bson>): Bson = TypedBson { m ->
    BsonDocument().apply { parts.forEach { putAll(TypedBson.render(it, m)) } }
}
