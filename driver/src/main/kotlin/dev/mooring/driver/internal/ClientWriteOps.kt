package dev.mooring.driver.internal

import dev.mooring.driver.ClientNamespacedWriteModel
import dev.mooring.driver.WriteModel
import org.bson.BsonBoolean
import org.bson.BsonDocument
import org.bson.BsonString
import org.bson.BsonValue
import org.bson.codecs.Codec
import org.bson.conversions.Bson

/**
 * Client bulk write models into [ClientWriteOp]s (bulk-write.md "Write Models" and "Building a
 * bulkWrite Command"): an insert's document gets an `_id` first when it has none; update
 * documents must start with an operator and replacements must not (crud.md's validation, before
 * anything is sent); `multi` is always sent; optional fields only when given. Stateless.
 */
internal object ClientWriteOps {
    /** [m] as the op at [index]; its documents encoded by [encoder] (one per bulk write: its documents share arrays). */
    fun of(index: Int, m: ClientNamespacedWriteModel<*>, encoder: DocumentEncoder.Batch): ClientWriteOp {
        @Suppress("UNCHECKED_CAST")
        val model = m as ClientNamespacedWriteModel<Any>
        return of(index, model.namespace, model.model, model.codec, encoder)
    }

    private fun of(index: Int, ns: String, model: WriteModel<Any>, codec: Codec<Any>, encoder: DocumentEncoder.Batch): ClientWriteOp = when (model) {
        is WriteModel.InsertOne -> {
            val doc = encoder.encodeForInsert(model.document, codec)
            ClientWriteOp.insert(index, ns, doc, encoder.lastSize, encoder.lastId)
        }
        is WriteModel.UpdateOne -> update(index, ns, model.filter, WriteStatements.updateValue(model.update), false, model.upsert, model.arrayFilters, model.collation, model.hint, model.sort)
        is WriteModel.UpdateMany -> update(index, ns, model.filter, WriteStatements.updateValue(model.update), true, model.upsert, model.arrayFilters, model.collation, model.hint, null)
        is WriteModel.ReplaceOne -> {
            val replacement = encoder.encode(model.replacement, codec)
            WriteStatements.checkReplacement(replacement)
            update(index, ns, model.filter, replacement, false, model.upsert, null, model.collation, model.hint, model.sort)
        }
        is WriteModel.DeleteOne -> delete(index, ns, model.filter, false, model.collation, model.hint)
        is WriteModel.DeleteMany -> delete(index, ns, model.filter, true, model.collation, model.hint)
    }

    private fun update(
        index: Int,
        ns: String,
        filter: Bson,
        mods: BsonValue,
        multi: Boolean,
        upsert: Boolean?,
        arrayFilters: List<Bson>?,
        collation: Bson?,
        hint: dev.mooring.driver.Hint?,
        sort: Bson?,
    ): ClientWriteOp {
        val fields = 3 + present(arrayFilters) + present(collation) + present(hint) + present(upsert) + present(sort)
        val d = BsonDocument(capacityFor(fields)).append("filter", filter.toDoc()).append("updateMods", mods)
        arrayFilters?.let { d["arrayFilters"] = it.toArray() }
        d.optDoc("collation", collation).opt("hint", hint).opt("upsert", upsert).optDoc("sort", sort)
        d["multi"] = BsonBoolean.valueOf(multi)
        return ClientWriteOp.of(index, ns, ClientOpKind.UPDATE, d, multi)
    }

    private fun delete(index: Int, ns: String, filter: Bson, multi: Boolean, collation: Bson?, hint: dev.mooring.driver.Hint?): ClientWriteOp {
        val d = BsonDocument(capacityFor(2 + present(collation) + present(hint))).append("filter", filter.toDoc())
        d.optDoc("collation", collation).opt("hint", hint)
        d["multi"] = BsonBoolean.valueOf(multi)
        return ClientWriteOp.of(index, ns, ClientOpKind.DELETE, d, multi)
    }

    /** The nsInfo entry of [namespace]. */
    fun nsInfo(namespace: String): BsonDocument = BsonDocument("ns", BsonString(namespace))
}
