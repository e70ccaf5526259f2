package dev.mooring.driver

import org.bson.BsonDocument
import org.bson.codecs.BsonDocumentCodec
import org.bson.codecs.Codec

/**
 * One write of a client bulk write ([bulkWrite] on a cluster; bulk-write.md `NamespaceWriteModelPair`):
 * the [model] (insertOne, updateOne, updateMany, replaceOne, deleteOne, deleteMany, crud.md's
 * write models) and the [namespace] (`database.collection`) it writes to. Documents of type [T]
 * (an insert's document, a replacement) are encoded with [codec]: make one with [of] from a
 * typed collection (its codec, so a data class is stored as the collection stores it) or with
 * [of] a namespace and `BsonDocument` models. Immutable when the documents it holds are; may be
 * shared between threads then.
 */
public class ClientNamespacedWriteModel<T : Any> private constructor(
    /** The namespace written to, `database.collection`. */
    public val namespace: String,
    /** The write. */
    public val model: WriteModel<T>,
    /** Encodes the model's documents. */
    public val codec: Codec<T>,
) {
    init {
        val dot = namespace.indexOf('.')
        require(dot > 0 && dot < namespace.length - 1) { "a namespace is 'database.collection', got '$namespace'" }
    }

    override fun toString(): String = "ClientNamespacedWriteModel($namespace, $model)"

    public companion object {
        /** [model] on [collection]'s namespace, its documents encoded with the collection's codec. */
        @JvmStatic
        public fun <T : Any> of(collection: MongoCollection<T>, model: WriteModel<T>): ClientNamespacedWriteModel<T> =
            ClientNamespacedWriteModel(collection.namespace, model, collection.codec)

        /** [model] of BSON documents on [namespace] (`database.collection`). */
        @JvmStatic
        public fun of(namespace: String, model: WriteModel<BsonDocument>): ClientNamespacedWriteModel<BsonDocument> =
            ClientNamespacedWriteModel(namespace, model, BsonDocumentCodec())

        /** [model] on [namespace] (`database.collection`), its documents encoded with [codec]. */
        @JvmStatic
        public fun <T : Any> of(namespace: String, model: WriteModel<T>, codec: Codec<T>): ClientNamespacedWriteModel<T> =
            ClientNamespacedWriteModel(namespace, model, codec)
    }
}
