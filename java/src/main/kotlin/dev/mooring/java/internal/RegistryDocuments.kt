package dev.mooring.java.internal

import dev.mooring.driver.DocumentDecodingException
import dev.mooring.driver.WriteModel
import org.bson.BsonDocument
import org.bson.BsonDocumentReader
import org.bson.BsonReader
import org.bson.RawBsonDocument
import org.bson.codecs.Codec
import org.bson.codecs.DecoderContext
import org.bson.codecs.configuration.CodecConfigurationException
import org.bson.codecs.configuration.CodecRegistry

/**
 * A Java collection's documents of [documentClass] and the BSON documents of the driver
 * collection under it: encoded with [registry]'s codec straight into [RawBsonDocument] bytes
 * (which the driver sends as they are), and decoded from the replies with it. [BsonDocument]
 * documents pass through unchanged. Immutable; thread-safe when the codec is (bson's are).
 */
internal class RegistryDocuments<T : Any>(val documentClass: Class<T>, val registry: CodecRegistry, private val namespace: String) {
    /** Null for [BsonDocument]: its documents are the driver's. */
    private val codec: Codec<T>? = if (documentClass == BsonDocument::class.java) {
        null
    } else {
        try {
            registry.get(documentClass)
        } catch (e: CodecConfigurationException) {
            throw IllegalArgumentException("the codec registry has no codec for ${documentClass.name}: ${e.message}", e)
        }
    }

    fun encode(document: T): BsonDocument {
        val c = codec ?: return document as BsonDocument
        return RawBsonDocument(document, c)
    }

    fun encode(documents: List<T>): List<BsonDocument> = documents.map { encode(it) }

    /** [document] as [T]; [DocumentDecodingException] naming the namespace, the class and (when known) the field on failure. */
    fun decode(document: BsonDocument): T {
        val c = codec ?: return documentClass.cast(document)
        val reader: BsonReader = if (document is RawBsonDocument) document.asBsonReader() else BsonDocumentReader(document)
        return try {
            reader.use { c.decode(it, DECODER) }
        } catch (e: RuntimeException) {
            val field = runCatching { reader.currentName }.getOrNull()
            throw DocumentDecodingException(namespace, field, documentClass.name, e)
        }
    }

    /** [model] with its document encoded (the other models hold no document). */
    fun encode(model: WriteModel<T>): WriteModel<BsonDocument> = when (model) {
        is WriteModel.InsertOne -> WriteModel.InsertOne(encode(model.document))
        is WriteModel.ReplaceOne -> WriteModel.ReplaceOne(model.filter, encode(model.replacement), model.collation, model.hint, model.upsert, model.sort)
        is WriteModel.UpdateOne -> model
        is WriteModel.UpdateMany -> model
        is WriteModel.DeleteOne -> model
        is WriteModel.DeleteMany -> model
    }

    fun withRegistry(registry: CodecRegistry): RegistryDocuments<T> = RegistryDocuments(documentClass, registry, namespace)

    fun <R : Any> withClass(documentClass: Class<R>): RegistryDocuments<R> = RegistryDocuments(documentClass, registry, namespace)

    private companion object {
        val DECODER: DecoderContext = DecoderContext.builder().build()
    }
}
