package dev.mooring.driver.internal.query

import java.util.concurrent.ConcurrentHashMap
import kotlin.reflect.KProperty1
import kotlinx.serialization.InternalSerializationApi
import kotlinx.serialization.KSerializer
import kotlinx.serialization.SerialName
import kotlinx.serialization.Transient
import kotlinx.serialization.descriptors.SerialDescriptor
import kotlinx.serialization.internal.GeneratedSerializer

/**
 * One property as it is stored: its serial [name] and the [serializer] the class's serializer
 * writes it with (null when the class's serializer is not plugin-generated: values are then
 * encoded with the module's serializer for their runtime class).
 */
internal class SerialField(val name: String, val serializer: KSerializer<*>?)

/**
 * Property → serial field, from the class's serializer descriptor, cached per class (per
 * descriptor, so `Box<Int>` and `Box<String>` keep their own element serializers). Thread-safe.
 *
 * A property's serial name is its `@SerialName` when it has one (read from the annotation the
 * compiler keeps on the property), else its name; it must be an element of the descriptor.
 * A `@Transient` property, or one without a backing field, is not part of the serial form and is
 * refused with [IllegalArgumentException].
 */
internal object SerialFields {
    private val cache = ConcurrentHashMap<SerialDescriptor, ConcurrentHashMap<String, SerialField>>()

    fun <T> of(owner: KSerializer<T>, ownerClass: Class<*>, property: KProperty1<T, *>): SerialField =
        cache.computeIfAbsent(owner.descriptor) { ConcurrentHashMap() }
            .computeIfAbsent(property.name) { resolve(owner, ownerClass, property.name) }

    @OptIn(InternalSerializationApi::class)
    private fun resolve(owner: KSerializer<*>, ownerClass: Class<*>, property: String): SerialField {
        val descriptor = owner.descriptor
        val annotations = propertyAnnotations(ownerClass, property)
        val className = ownerClass.name
        require(annotations.none { it is Transient }) {
            "property '$property' of $className is @Transient: it is not part of the stored document and cannot be queried"
        }
        val name = annotations.filterIsInstance<SerialName>().firstOrNull()?.value ?: property
        val index = descriptor.getElementIndex(name)
        require(index >= 0) {
            "property '$property' of $className is not part of its serial form (${descriptor.serialName} has no element '$name'): " +
                "a property without a backing field, or a class whose serializer does not write it"
        }
        val serializer = (owner as? GeneratedSerializer<*>)?.childSerializers()?.getOrNull(index)
        return SerialField(name, serializer)
    }

    /**
     * The annotations of [property] as Kotlin keeps them for reflection: on the synthetic
     * `getX$annotations` (or `isX$annotations`) method of the declaring class or a superclass.
     */
    private fun propertyAnnotations(ownerClass: Class<*>, property: String): List<Annotation> {
        val candidates = setOf("get${property.replaceFirstChar { it.uppercaseChar() }}\$annotations", "$property\$annotations")
        var c: Class<*>? = ownerClass
        while (c != null && c != Any::class.java) {
            c.declaredMethods.firstOrNull { it.isSynthetic && it.name in candidates && it.parameterCount == 0 }
                ?.let { return it.annotations.toList() }
            c = c.superclass
        }
        return emptyList()
    }
}
