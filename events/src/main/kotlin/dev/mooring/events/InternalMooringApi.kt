package dev.mooring.events

/**
 * Marks a declaration that is public only because another Mooring module (`cmap`, `sdam`,
 * `java`) calls it in production: **not API**. Most live in `internal` packages; two sit in a
 * public package beside the public code that uses them too (`StructuredLog`, `ClientWireVersion`). It may change or disappear in any release without
 * notice. Using it is a compile error unless the caller opts in with
 * `@OptIn(InternalMooringApi::class)` or `-opt-in=dev.mooring.events.InternalMooringApi`; only
 * Mooring's own modules do. Thread-safety is stated on each marked declaration.
 */
@RequiresOptIn(
    message = "Mooring's internal API: not stable, may change or disappear in any release; used only between Mooring's modules.",
    level = RequiresOptIn.Level.ERROR,
)
@Retention(AnnotationRetention.BINARY)
@Target(AnnotationTarget.CLASS, AnnotationTarget.FUNCTION, AnnotationTarget.PROPERTY, AnnotationTarget.CONSTRUCTOR)
@MustBeDocumented
public annotation class InternalMooringApi
