package dev.mooring.driver

import org.bson.conversions.Bson

/**
 * The change an update makes (crud.md): a document of update operators, every top-level key
 * starting with `$` (`{$set: {a: 1}}`), or an aggregation pipeline (MongoDB 4.2+). An update
 * document whose first key does not start with `$`, or an empty one, fails with
 * [IllegalArgumentException] before anything is sent (use replaceOne to replace a document).
 * Immutable; safe to share between threads.
 */
public sealed interface Update {
    /** An update document: `{$set: ..., $inc: ...}`. */
    public data class Operators(val document: Bson) : Update

    /** An aggregation pipeline update: `[{$set: ...}, {$unset: ...}]`. */
    public data class Pipeline(val stages: List<Bson>) : Update
}
