package dev.mooring.bench.workload

import kotlinx.serialization.Contextual
import kotlinx.serialization.SerialName
import kotlinx.serialization.Serializable
import org.bson.types.ObjectId

// The ODM tasks' models (odm-benchmarking.md), as a Kotlin user writes them for kotlinx.serialization: data classes,
// the spec's field names, `_id` an ObjectId the application assigns. Immutable; safe to share between threads.
// LARGE_DOC's flat model is not here: see bench/README "Workload tasks".

/** The SMALL_DOC model (`flat-models/small_doc.json`); [fieldFk] the FOREIGN_KEY reference of the foreign-key task, absent when null. */
@Serializable
data class SmallModel(
    @SerialName("_id") @Contextual val id: ObjectId = ObjectId(),
    val field1: String,
    val field2: String,
    val field3: String,
    val field4: String,
    val field5: String,
    val field6: String,
    val field7: String,
    val field8: Int,
    val field9: Int,
    val field10: Int,
    val field11: Int,
    val field12: Int,
    val field13: Int,
    @SerialName("field_fk") @Contextual val fieldFk: ObjectId? = null,
)

/** The FOREIGN_KEY model of the foreign-key task: only a string `name` (besides its `_id`). */
@Serializable
data class ForeignKeyModel(
    @SerialName("_id") @Contextual val id: ObjectId,
    val name: String,
)

/** The LARGE_DOC_NESTED model (`nested-models/large_doc_nested.json`). */
@Serializable
data class LargeNestedModel(
    @SerialName("_id") @Contextual val id: ObjectId = ObjectId(),
    @SerialName("embedded_str_doc_1") val embeddedStrDoc1: EmbeddedStrDoc,
    @SerialName("embedded_str_doc_2") val embeddedStrDoc2: EmbeddedStrDoc,
    @SerialName("embedded_str_doc_3") val embeddedStrDoc3: EmbeddedStrDoc,
    @SerialName("embedded_str_doc_4") val embeddedStrDoc4: EmbeddedStrDoc,
    @SerialName("embedded_str_doc_5") val embeddedStrDoc5: EmbeddedStrDoc,
    @SerialName("embedded_str_doc_array") val embeddedStrDocArray: List<EmbeddedStrDoc>,
    @SerialName("embedded_int_doc_8") val embeddedIntDoc8: EmbeddedIntDoc,
    @SerialName("embedded_int_doc_9") val embeddedIntDoc9: EmbeddedIntDoc,
    @SerialName("embedded_int_doc_10") val embeddedIntDoc10: EmbeddedIntDoc,
    @SerialName("embedded_int_doc_11") val embeddedIntDoc11: EmbeddedIntDoc,
    @SerialName("embedded_int_doc_12") val embeddedIntDoc12: EmbeddedIntDoc,
    @SerialName("embedded_int_doc_13") val embeddedIntDoc13: EmbeddedIntDoc,
    @SerialName("embedded_int_doc_14") val embeddedIntDoc14: EmbeddedIntDoc,
)

/**
 * An embedded document of 15 strings; [uniqueId] (`unique_id`, not in the dataset file) is the value the find-nested
 * tasks filter on, assigned per saved model (empty in the file's model).
 */
@Serializable
data class EmbeddedStrDoc(
    val field1: String,
    val field2: String,
    val field3: String,
    val field4: String,
    val field5: String,
    val field6: String,
    val field7: String,
    val field8: String,
    val field9: String,
    val field10: String,
    val field11: String,
    val field12: String,
    val field13: String,
    val field14: String,
    val field15: String,
    @SerialName("unique_id") val uniqueId: String = "",
)

/** An embedded document of 15 ints. */
@Serializable
data class EmbeddedIntDoc(
    val field1: Int,
    val field2: Int,
    val field3: Int,
    val field4: Int,
    val field5: Int,
    val field6: Int,
    val field7: Int,
    val field8: Int,
    val field9: Int,
    val field10: Int,
    val field11: Int,
    val field12: Int,
    val field13: Int,
    val field14: Int,
    val field15: Int,
)
