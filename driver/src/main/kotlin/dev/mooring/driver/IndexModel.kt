package dev.mooring.driver

import dev.mooring.driver.internal.toDoc
import org.bson.conversions.Bson

/**
 * One index to create (index-management.md `IndexModel`): its key pattern and [options].
 * Immutable; safe to share between threads.
 *
 * [keys] must name at least one field ([IllegalArgumentException] at construction, so nothing is
 * sent). The index's name is [IndexOptions.name], else generated from [keys] as index-management.md
 * says: `field_direction` pairs joined by `_` (`{name: 1, dob: -1}` is `name_1_dob_-1`).
 */
public data class IndexModel(
    /** The key pattern, e.g. `{a: 1, b: -1}`, `{loc: "2dsphere"}`, `{"$**": "text"}`. */
    val keys: Bson,
    /** The index's options. */
    val options: IndexOptions = IndexOptions(),
) {
    init {
        require(keys.toDoc().isNotEmpty()) { "an index needs at least one key (the keys document is empty)" }
    }
}

/**
 * The options of one index (index-management.md `IndexOptions`), sent in its `createIndexes`
 * specification; each one left null is not sent and the server's default applies. Immutable;
 * safe to share between threads. The server validates the combinations.
 */
public data class IndexOptions(
    /** The index's name; null generates it from the keys. */
    val name: String? = null,
    /** Rejects duplicate keys (`unique`). */
    val unique: Boolean? = null,
    /** Only indexes documents that have the indexed fields (`sparse`). */
    val sparse: Boolean? = null,
    /** A TTL index: documents expire this many seconds after the indexed date (`expireAfterSeconds`). */
    val expireAfterSeconds: Long? = null,
    /** Only documents matching this filter are indexed (`partialFilterExpression`). */
    val partialFilterExpression: Bson? = null,
    /** The index's collation. */
    val collation: Bson? = null,
    /** Hidden from the query planner (`hidden`; MongoDB 4.4+). */
    val hidden: Boolean? = null,
    /** The fields of a wildcard index (`wildcardProjection`). */
    val wildcardProjection: Bson? = null,
    /** Per-index storage engine options (`storageEngine`). */
    val storageEngine: Bson? = null,
    /** The index version (`v`). */
    val version: Int? = null,
    /** Text index: field weights (`weights`). */
    val weights: Bson? = null,
    /** Text index: the default language (`default_language`). */
    val defaultLanguage: String? = null,
    /** Text index: the field that overrides the language (`language_override`). */
    val languageOverride: String? = null,
    /** Text index: its version (`textIndexVersion`). */
    val textIndexVersion: Int? = null,
    /** 2dsphere index: its version (`2dsphereIndexVersion`). */
    val sphereIndexVersion: Int? = null,
    /** 2d index: the geohash precision, 1 to 32 (`bits`). */
    val bits: Int? = null,
    /** 2d index: the lower bound of coordinates (`min`). */
    val min: Double? = null,
    /** 2d index: the upper bound of coordinates (`max`). */
    val max: Double? = null,
    /** Ignored by servers since 4.2 (`background`). */
    val background: Boolean? = null,
)
