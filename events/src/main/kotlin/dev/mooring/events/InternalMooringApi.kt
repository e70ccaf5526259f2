package dev.mooring.events

/**
 * Marks a declaration of an `internal` package that is public only because another Mooring
 * module (`sdam`, `java`) calls it: **not API**. It may change or disappear in any release without
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
