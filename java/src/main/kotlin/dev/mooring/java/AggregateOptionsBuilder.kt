package dev.mooring.java

import dev.mooring.driver.AggregateOptions
import dev.mooring.driver.Hint
import dev.mooring.sdam.TimeoutMode
import org.bson.BsonDocument
import org.bson.BsonString
import org.bson.BsonValue
import org.bson.conversions.Bson

/**
 * Builds a driver [AggregateOptions] from Java, one option at a time; every option left unset
 * keeps the [AggregateOptions] default (not sent).
 *
 * **Concurrency.** Not thread-safe: use one builder from one thread. The built options are
 * immutable and may be shared.
 */
public class AggregateOptionsBuilder {
    private var options = AggregateOptions()

    /** Lets the server write temporary files. */
    public fun allowDiskUse(allowDiskUse: Boolean): AggregateOptionsBuilder = apply { options = options.copy(allowDiskUse = allowDiskUse) }

    /** Documents per batch (not negative). */
    public fun batchSize(batchSize: Int): AggregateOptionsBuilder = apply { options = options.copy(batchSize = batchSize) }

    /** Skips document validation for `$out`/`$merge`. */
    public fun bypassDocumentValidation(bypass: Boolean): AggregateOptionsBuilder = apply { options = options.copy(bypassDocumentValidation = bypass) }

    /** The collation. */
    public fun collation(collation: Bson): AggregateOptionsBuilder = apply { options = options.copy(collation = collation) }

    /** A comment attached to the command. */
    public fun comment(comment: BsonValue): AggregateOptionsBuilder = apply { options = options.copy(comment = comment) }

    /** A comment attached to the command. */
    public fun comment(comment: String): AggregateOptionsBuilder = comment(BsonString(comment))

    /** The index to use, by name. */
    public fun hint(indexName: String): AggregateOptionsBuilder = apply { options = options.copy(hint = Hint.Name(indexName)) }

    /** The index to use, by key pattern. */
    public fun hint(keys: BsonDocument): AggregateOptionsBuilder = apply { options = options.copy(hint = Hint.Keys(keys)) }

    /** Variables for the pipeline (`let`). */
    public fun let(let: Bson): AggregateOptionsBuilder = apply { options = options.copy(let = let) }

    /** Server-side time limit (deprecated by timeoutMS; not combinable with it). */
    public fun maxTimeMS(maxTimeMS: Long): AggregateOptionsBuilder = apply { options = options.copy(maxTimeMS = maxTimeMS) }

    /** How the collection's timeoutMS applies to the cursor. */
    public fun timeoutMode(timeoutMode: TimeoutMode): AggregateOptionsBuilder = apply { options = options.copy(timeoutMode = timeoutMode) }

    /** The options. */
    public fun build(): AggregateOptions = options
}
