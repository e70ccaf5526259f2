package dev.mooring.driver

import org.bson.conversions.Bson

/**
 * One Atlas Search or Vector Search index to create (index-management.md `SearchIndexModel` with
 * its `SearchIndexOptions`). Immutable; safe to share between threads.
 */
public data class SearchIndexModel(
    /** The index definition (its syntax depends on [type]). */
    val definition: Bson,
    /** The index's name; null lets the server name it `default`. */
    val name: String? = null,
    /** `search` or `vectorSearch`; null lets the server use `search`. */
    val type: String? = null,
) {
    init {
        require(name == null || name.isNotEmpty()) { "a search index name must not be empty" }
    }
}
