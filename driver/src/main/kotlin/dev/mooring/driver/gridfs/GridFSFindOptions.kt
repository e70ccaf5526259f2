package dev.mooring.driver.gridfs

import org.bson.conversions.Bson

/**
 * The options of [GridFSBucket.find] (gridfs-spec.md `GridFSFindOptions`), passed to the `find`
 * on the files collection; each one left null is not sent. Immutable; safe to share between threads.
 */
public data class GridFSFindOptions(
    /** Lets the server write temporary files for large sorts. */
    val allowDiskUse: Boolean? = null,
    /** Files collection documents per batch. */
    val batchSize: Int? = null,
    /** At most this many files. */
    val limit: Int? = null,
    /** Server-side time limit of the find (deprecated by timeoutMS, dropped when one applies). */
    val maxTimeMS: Long? = null,
    /** Keeps an idle cursor open on the server. */
    val noCursorTimeout: Boolean? = null,
    /** Files to skip first. */
    val skip: Int? = null,
    /** The order of the results, for example `{uploadDate: -1}`. */
    val sort: Bson? = null,
)
