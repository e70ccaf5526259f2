package dev.mooring.driver

/**
 * Marks the `rawData` option of crud.md, bulk-write.md and index-management.md ([RawData]): an
 * option **for MongoDB's internal use** (access to the underlying namespaces of time-series
 * collections), not for applications. It may change or be removed in any release without notice.
 * The option is sent only to MongoDB 8.2 or newer (wire version 27), never to an older server.
 * Creating one ([RawData.of]) is a compile error unless the caller opts in with
 * `@OptIn(MooringRawDataOption::class)`.
 */
@RequiresOptIn(
    message = "rawData is for MongoDB's internal use (time-series raw namespaces); it may change or be removed in any release.",
    level = RequiresOptIn.Level.ERROR,
)
@Retention(AnnotationRetention.BINARY)
@Target(AnnotationTarget.FUNCTION)
@MustBeDocumented
public annotation class MooringRawDataOption
