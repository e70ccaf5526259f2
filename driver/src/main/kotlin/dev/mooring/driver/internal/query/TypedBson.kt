package dev.mooring.driver.internal.query

import dev.mooring.driver.MooringSerializers
import kotlinx.serialization.modules.SerializersModule
import org.bson.BsonDocument
import org.bson.codecs.configuration.CodecRegistry
import org.bson.conversions.Bson

/**
 * A filter, sort, projection or update document built from property references, rendered when
 * the driver asks for it: values are encoded with [MooringSerializers.module], or with the module
 * given to [render]. Immutable; thread-safe (each rendering builds a new document).
 */
internal class TypedBson(private val build: (SerializersModule) -> BsonDocument) : Bson {
    fun render(module: SerializersModule): BsonDocument = build(module)

    override fun <TDocument : Any?> toBsonDocument(documentClass: Class<TDocument>?, codecRegistry: CodecRegistry?): BsonDocument =
        render(MooringSerializers.module)

    override fun equals(other: Any?): Boolean = other is TypedBson && render(MooringSerializers.module) == other.render(MooringSerializers.module)

    override fun hashCode(): Int = render(MooringSerializers.module).hashCode()

    override fun toString(): String = render(MooringSerializers.module).toJson()

    companion object {
        /** [bson] as a document, typed parts rendered with [module]. */
        fun render(bson: Bson, module: SerializersModule): BsonDocument = when (bson) {
            is TypedBson -> bson.render(module)
            is BsonDocument -> bson
            else -> bson.toBsonDocument()
        }
    }
}
