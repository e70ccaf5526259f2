package dev.mooring.java

import dev.mooring.driver.ClientNamespacedWriteModel
import dev.mooring.driver.Update
import dev.mooring.driver.WriteModel
import org.bson.conversions.Bson

/**
 * Java factories of the driver's [WriteModel]s for [JavaMongoCollection.bulkWrite] (and, paired with a
 * namespace by [on], for [JavaMongoCluster.bulkWrite]), typed by the
 * collection's document type so one `List<WriteModel<T>>` holds every kind:
 *
 * ```java
 * List<WriteModel<Person>> models = List.of(
 *     WriteModels.insertOne(new Person("Ada", 36)),
 *     WriteModels.updateOne(eq("name", "Ada"), new BsonDocument("$inc", new BsonDocument("age", new BsonInt32(1)))),
 *     WriteModels.deleteMany(new BsonDocument("age", new BsonDocument("$gt", new BsonInt32(99)))));
 * ```
 *
 * The other options of a model (collation, hint, upsert, ...) are the model's constructor
 * parameters. **Concurrency.** Stateless and thread-safe; the models are immutable when their
 * documents are.
 */
public object WriteModels {
    /**
     * [model] on [collection]'s namespace for the client bulk write ([JavaMongoCluster.bulkWrite]),
     * its documents encoded with the collection's codec (from its registry).
     */
    @JvmStatic
    public fun <T : Any> on(collection: JavaMongoCollection<T>, model: WriteModel<T>): ClientNamespacedWriteModel<T> =
        ClientNamespacedWriteModel.of(collection.namespace, model, collection.codecRegistry.get(collection.documentClass))

    /** Inserts [document]. */
    @JvmStatic
    public fun <T : Any> insertOne(document: T): WriteModel<T> = WriteModel.InsertOne(document)

    /** Updates the first document matching [filter] with the update operators of [update]. */
    @JvmStatic
    public fun <T : Any> updateOne(filter: Bson, update: Bson): WriteModel<T> = WriteModel.UpdateOne(filter, Update.Operators(update))

    /** Updates every document matching [filter] with the update operators of [update]. */
    @JvmStatic
    public fun <T : Any> updateMany(filter: Bson, update: Bson): WriteModel<T> = WriteModel.UpdateMany(filter, Update.Operators(update))

    /** Replaces the first document matching [filter] with [replacement]. */
    @JvmStatic
    public fun <T : Any> replaceOne(filter: Bson, replacement: T): WriteModel<T> = WriteModel.ReplaceOne(filter, replacement)

    /** Deletes the first document matching [filter]. */
    @JvmStatic
    public fun <T : Any> deleteOne(filter: Bson): WriteModel<T> = WriteModel.DeleteOne(filter)

    /** Deletes every document matching [filter]. */
    @JvmStatic
    public fun <T : Any> deleteMany(filter: Bson): WriteModel<T> = WriteModel.DeleteMany(filter)
}
