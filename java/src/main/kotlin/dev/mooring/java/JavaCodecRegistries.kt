package dev.mooring.java

import org.bson.codecs.configuration.CodecRegistries
import org.bson.codecs.configuration.CodecRegistry
import org.bson.codecs.pojo.PojoCodecProvider
import org.bson.codecs.record.RecordCodecProvider
import org.bson.conversions.Bson

/**
 * The codec registries of typed Java collections ([JavaMongoDatabase.getCollection] with a
 * class). Immutable; the registries are thread-safe.
 */
public object JavaCodecRegistries {
    /**
     * The default registry: `org.bson`'s own codecs ([Bson.DEFAULT_CODEC_REGISTRY]: the BSON
     * values, `Document`, the JDK value and `java.time` types, collections and maps), then Java
     * records (bson-record-codec's `RecordCodecProvider`: a record's components are its fields,
     * `@BsonId` marks the `_id`), then any other class as a POJO (`PojoCodecProvider` in automatic
     * mode: the properties with getters and setters, or a `@BsonCreator` constructor). Combine
     * your own codecs in front of it with `CodecRegistries.fromRegistries(yours, DEFAULT)`.
     */
    @JvmField
    public val DEFAULT: CodecRegistry = CodecRegistries.fromRegistries(
        Bson.DEFAULT_CODEC_REGISTRY,
        CodecRegistries.fromProviders(RecordCodecProvider(), PojoCodecProvider.builder().automatic(true).build()),
    )
}
