package dev.mooring.driver.query

import dev.mooring.driver.internal.query.TypedBson
import kotlin.reflect.KProperty1
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.conversions.Bson

// Projection documents by serial field names, for FindOptions.projection and the findOneAndX
// options. Immutable, thread-safe results.

/** `{a: 1, b: 1}`: only [fields] (and `_id`, unless excluded) are returned. */
public fun include(vararg fields: FieldPath<*, *>): Bson = flags(fields.toList(), 1)

/** `{a: 0, b: 0}`: every field but [fields] is returned. */
public fun exclude(vararg fields: FieldPath<*, *>): Bson = flags(fields.toList(), 0)

/** `{a: 1}` by the properties' serial names: `include(Movie::title, Movie::year)`. */
public inline fun <reified T> include(vararg properties: KProperty1<T, *>): Bson = include(*properties.map { path(it) }.toTypedArray())

/** `{a: 0}` by the properties' serial names. */
public inline fun <reified T> exclude(vararg properties: KProperty1<T, *>): Bson = exclude(*properties.map { path(it) }.toTypedArray())

/** `{_id: 0}`. */
public fun excludeId(): Bson = TypedBson { BsonDocument("_id", BsonInt32(0)) }

/** One projection document of [projections]: `fields(include(Movie::title), excludeId())`. */
public fun fields(vararg projections: Bson): Bson = merged(projections.toList())

private fun flags(fields: List<FieldPath<*, *>>, flag: Int): Bson =
    TypedBson { BsonDocument().apply { fields.forEach { put(it.name, BsonInt32(flag)) } } }
