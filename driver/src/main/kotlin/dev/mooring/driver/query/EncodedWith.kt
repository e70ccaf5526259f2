package dev.mooring.driver.query

import dev.mooring.driver.Update
import dev.mooring.driver.internal.query.TypedBson
import kotlinx.serialization.modules.SerializersModule
import org.bson.BsonDocument
import org.bson.conversions.Bson

/**
 * This filter, sort, projection or update document with the values of its typed parts encoded
 * with [module] instead of [dev.mooring.driver.MooringSerializers.module]: pass the module the
 * collection uses (`database.serializersModule`) when it adds contextual serializers.
 * A plain [Bson] is rendered as it is (a [BsonDocument]: itself).
 */
public fun Bson.encodedWith(module: SerializersModule): BsonDocument = TypedBson.render(this, module)

/** This update with its typed parts encoded with [module] (see [Bson.encodedWith]). */
public fun Update.encodedWith(module: SerializersModule): Update = when (this) {
    is Update.Operators -> Update.Operators(document.encodedWith(module))
    is Update.Pipeline -> Update.Pipeline(stages.map { it.encodedWith(module) })
}
