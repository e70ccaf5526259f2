package dev.mooring.spec.unified

/**
 * Why the unified runner failed a test itself (unified-test-format.md): every failure the format
 * makes the runner raise has one kind here, so a runner error is never confused with a crash or
 * with a deployment that is missing. Immutable.
 */
sealed class UnifiedTestFailure(message: String, cause: Throwable? = null) : AssertionError(message, cause) {
    /** The file's schemaVersion is not compatible with the runner's ("Test Runner Support"). */
    class IncompatibleSchemaVersion(message: String) : UnifiedTestFailure(message)

    /**
     * The file is well-formed JSON but cannot be run as written: a required field is missing, an
     * entity it names is undefined or of another type, an id is taken, an enum value or a
     * special operator is used wrongly, an argument is unknown, KMS providers are malformed.
     */
    class InvalidTestFile(message: String, cause: Throwable? = null) : UnifiedTestFailure(message, cause)

    /** The file uses an operation, entity, event or field this runner does not implement. */
    class UnsupportedByRunner(message: String) : UnifiedTestFailure(message)

    /** An assertion of the test failed: a result, an error, an event, a log message, the outcome, an assert* operation. */
    class ExpectationFailed(message: String, cause: Throwable? = null) : UnifiedTestFailure(message, cause)
}

/** Raises [UnifiedTestFailure.InvalidTestFile]. */
fun invalidTest(message: String): Nothing = throw UnifiedTestFailure.InvalidTestFile(message)

/** Raises [UnifiedTestFailure.ExpectationFailed] with [message] unless [condition]. */
inline fun expectThat(condition: Boolean, message: () -> String) {
    if (!condition) throw UnifiedTestFailure.ExpectationFailed(message())
}
