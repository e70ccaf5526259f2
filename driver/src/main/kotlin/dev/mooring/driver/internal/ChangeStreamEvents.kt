package dev.mooring.driver.internal

import dev.mooring.driver.ChangeStreamDocument
import dev.mooring.driver.ChangeStreamNamespace
import dev.mooring.driver.SplitEvent
import dev.mooring.driver.TruncatedArray
import dev.mooring.driver.UpdateDescription
import org.bson.BsonDocument
import org.bson.BsonValue

/** Change events into [ChangeStreamDocument]s, the full documents through the collection's [codec]. Stateless. */
internal class ChangeStreamEvents<T : Any>(private val codec: DocumentCodec<T>) {
    /** [event] (it has its `_id`, [token]) as a [ChangeStreamDocument]. */
    fun decode(event: BsonDocument, token: BsonDocument): ChangeStreamDocument<T> = ChangeStreamDocument(
        resumeToken = token,
        operationType = event.str("operationType"),
        ns = namespace(event["ns"]),
        to = namespace(event["to"]),
        documentKey = event.doc("documentKey"),
        updateDescription = event.doc("updateDescription")?.let(::updateDescription),
        fullDocument = event.doc("fullDocument")?.let(codec::decode),
        fullDocumentBeforeChange = event.doc("fullDocumentBeforeChange")?.let(codec::decode),
        clusterTime = event["clusterTime"]?.takeIf { it.isTimestamp }?.asTimestamp(),
        wallTime = event["wallTime"]?.takeIf { it.isDateTime }?.asDateTime(),
        collectionUUID = event["collectionUUID"]?.takeIf { it.isBinary }?.asBinary(),
        txnNumber = event["txnNumber"]?.takeIf { it.isNumber }?.asNumber()?.longValue(),
        lsid = event.doc("lsid"),
        splitEvent = event.doc("splitEvent")?.let { s ->
            val fragment = s["fragment"]?.takeIf { it.isNumber }?.asNumber()?.intValue()
            val of = s["of"]?.takeIf { it.isNumber }?.asNumber()?.intValue()
            if (fragment != null && of != null) SplitEvent(fragment, of) else null
        },
        raw = event,
    )

    private fun namespace(v: BsonValue?): ChangeStreamNamespace? {
        val d = v?.takeIf { it.isDocument }?.asDocument() ?: return null
        val db = d.str("db") ?: return null
        return ChangeStreamNamespace(db, d.str("coll"))
    }

    private fun updateDescription(d: BsonDocument) = UpdateDescription(
        updatedFields = d.doc("updatedFields"),
        removedFields = d["removedFields"]?.takeIf { it.isArray }?.asArray()?.filter { it.isString }?.map { it.asString().value }.orEmpty(),
        truncatedArrays = d["truncatedArrays"]?.takeIf { it.isArray }?.asArray()?.mapNotNull { t ->
            val a = t.takeIf { it.isDocument }?.asDocument() ?: return@mapNotNull null
            val field = a.str("field") ?: return@mapNotNull null
            val size = a["newSize"]?.takeIf { it.isNumber }?.asNumber()?.intValue() ?: return@mapNotNull null
            TruncatedArray(field, size)
        }.orEmpty(),
        disambiguatedPaths = d.doc("disambiguatedPaths"),
    )

    private fun BsonDocument.str(name: String): String? = get(name)?.takeIf { it.isString }?.asString()?.value

    private fun BsonDocument.doc(name: String): BsonDocument? = get(name)?.takeIf { it.isDocument }?.asDocument()
}
