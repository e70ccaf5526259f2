package dev.mooring.events

/**
 * The root of every error Mooring throws. Error labels (for example `RetryableWriteError`,
 * `SystemOverloadedError`) travel with the exception so retry logic can read them.
 * Messages never contain credentials.
 */
public open class MooringException(message: String, cause: Throwable? = null) : RuntimeException(message, cause) {
    private val labels: MutableSet<String> = java.util.concurrent.ConcurrentHashMap.newKeySet()

    /** The error labels attached so far (a snapshot). */
    public val errorLabels: Set<String> get() = labels.toSet()

    /** True when [label] is attached. */
    public fun hasErrorLabel(label: String): Boolean = label in labels

    /** Attaches [label]; safe to call from any thread. */
    public fun addErrorLabel(label: String) {
        labels.add(label)
    }
}
