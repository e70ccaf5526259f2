package dev.mooring.driver.query

import dev.mooring.driver.MooringSerializers
import dev.mooring.driver.internal.query.SerialFields
import kotlin.reflect.KProperty1
import kotlinx.serialization.KSerializer
import kotlinx.serialization.serializer

/**
 * The path of a field of documents of [T] holding values of [V], made from property references
 * with their SERIAL names: `path(Movie::id).name` is `_id` for `@SerialName("_id") val id`, and
 * `(Movie::director / Person::name).name` is `director.name`. Renaming a property is a compile
 * error where a path names it; a `@Transient` property (not part of the stored form) is refused
 * with [IllegalArgumentException] when the path is made.
 *
 * A path also carries the serializer the document class writes the field with, so the filters
 * and updates built on it ([eq], [set], ...) encode values exactly as stored documents hold them.
 *
 * Immutable; thread-safe.
 */
public class FieldPath<T, out V> @PublishedApi internal constructor(
    /** The dotted path of serial names, as the server reads it: `director.name`. */
    public val name: String,
    internal val serializer: KSerializer<*>?,
) {
    override fun equals(other: Any?): Boolean = other is FieldPath<*, *> && other.name == name

    override fun hashCode(): Int = name.hashCode()

    override fun toString(): String = name
}

/** The path of [property] of [owner]'s class (its serial field), for the inline builders. */
@PublishedApi
internal fun <T, V> fieldPathOf(owner: KSerializer<T>, ownerClass: Class<*>, property: KProperty1<T, V>): FieldPath<T, V> {
    val field = SerialFields.of(owner, ownerClass, property)
    return FieldPath(field.name, field.serializer)
}

/** [child] inside [parent]: the dotted path, with the child's serializer. */
@PublishedApi
internal fun <T, V> nestedPath(parent: FieldPath<T, *>, child: FieldPath<*, V>): FieldPath<T, V> =
    FieldPath("${parent.name}.${child.name}", child.serializer)

/** The path of [property] of documents of [T] (its serial name). */
public inline fun <reified T, V> path(property: KProperty1<T, V>): FieldPath<T, V> =
    fieldPathOf(MooringSerializers.module.serializer<T>(), T::class.java, property)

/** The field [next] of the embedded document at this property: `Movie::director / Person::name` is `director.name`. */
public inline operator fun <reified T, reified P : Any, V> KProperty1<T, P?>.div(next: KProperty1<P, V>): FieldPath<T, V> =
    nestedPath(path(this), path(next))

/** The field [next] of the embedded document at this path: `Movie::director / Person::address / Address::city`. */
public inline operator fun <T, reified P : Any, V> FieldPath<T, P?>.div(next: KProperty1<P, V>): FieldPath<T, V> =
    nestedPath(this, path(next))

/**
 * The field [next] of the documents of the array at this property: `Movie::cast / Person::name`
 * is `cast.name`, which matches when any element matches (the server's dotted array paths).
 */
@JvmName("divElements")
public inline operator fun <reified T, reified P : Any, V> KProperty1<T, Iterable<P>?>.div(next: KProperty1<P, V>): FieldPath<T, V> =
    nestedPath(path(this), path(next))
