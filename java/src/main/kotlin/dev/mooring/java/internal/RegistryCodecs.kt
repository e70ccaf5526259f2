package dev.mooring.java.internal

import org.bson.BsonDocument
import org.bson.codecs.BsonDocumentCodec
import org.bson.codecs.Codec
import org.bson.codecs.configuration.CodecConfigurationException
import org.bson.codecs.configuration.CodecRegistry

/** The codec a Java collection's documents of a class get from a [CodecRegistry]. Stateless. */
internal object RegistryCodecs {
    /**
     * [registry]'s codec for [documentClass]; [BsonDocument] gets [BsonDocumentCodec] (its documents
     * are the driver's, passed through as they are). [IllegalArgumentException] naming the class
     * when the registry has none.
     */
    @Suppress("UNCHECKED_CAST")
    fun <T : Any> codec(registry: CodecRegistry, documentClass: Class<T>): Codec<T> {
        if (documentClass == BsonDocument::class.java) return BsonDocumentCodec() as Codec<T>
        return try {
            registry.get(documentClass)
        } catch (e: CodecConfigurationException) {
            throw IllegalArgumentException("the codec registry has no codec for ${documentClass.name}: ${e.message}", e)
        }
    }
}
