package dev.mooring.driver

/**
 * What the collection bulk write ([MongoCollection.bulkWrite], [MongoCollection.insertMany]) that
 * this error interrupted had done before it (crud.md `BulkWriteException.writeResult`, "the
 * intermediary write result for any operations that succeeded before the bulk write was
 * interrupted"), or null when this error did not interrupt an acknowledged collection bulk write.
 *
 * A bulk write is interrupted by any error other than write errors and write concern errors
 * (those end it as a [MongoBulkWriteException]): a network error, a command error, a timeout, a
 * server selection failure. That error is thrown unchanged — its type, code and error labels, so
 * `catch (e: MongoOperationTimeoutException)` and retry decisions keep working — and carries the
 * bulk write's outcome up to that point as a suppressed [MongoBulkWriteException]: its
 * [MongoBulkWriteException.partialResult] counts the batches the server acknowledged (all zero
 * when the first batch failed: nothing is known to have been applied, though an interrupted
 * batch may have been), with the write errors and write concern errors those batches reported.
 */
public val Throwable.interruptedBulkWrite: MongoBulkWriteException?
    get() = suppressed.firstNotNullOfOrNull { it as? MongoBulkWriteException }
