package dev.mooring.sdam.internal

import dev.mooring.sdam.ApplicationError

/**
 * The spec's tables of state change error codes and the message fallback used only when there
 * is no code: the pseudocode's "not master" strings and their renamed forms ("not writable
 * primary", "not primary or secondary") that the SDAM test plan's examples use. Pure.
 */
internal object ErrorClassification {
    private val recoveringCodes = setOf(11600, 11602, 13436, 189, 91)
    private val notWritablePrimaryCodes = setOf(10107, 13435, 10058)
    private val shutdownCodes = setOf(11600, 91)

    /** A code of 0 counts as no code, as in the spec's pseudocode. */
    private fun Int?.orNone(): Int? = this?.takeIf { it != 0 }

    fun isRecovering(code: Int?, message: String?): Boolean =
        if (code.orNone() != null) {
            code in recoveringCodes
        } else {
            val m = message ?: ""
            // the pseudocode's strings, and their renamed forms (server-discovery-and-monitoring-tests.md's examples)
            "not master or secondary" in m || "not primary or secondary" in m || "node is recovering" in m
        }

    fun isNotWritablePrimary(code: Int?, message: String?): Boolean =
        if (code.orNone() != null) {
            code in notWritablePrimaryCodes
        } else {
            !isRecovering(null, message) && (message ?: "").let { "not master" in it || "not writable primary" in it || "not primary" in it }
        }

    fun isShutdown(code: Int?): Boolean = code != null && code in shutdownCodes

    fun isStateChange(code: Int?, message: String?): Boolean = isRecovering(code, message) || isNotWritablePrimary(code, message)

    /** The backpressure rule: errors the pool labelled `SystemOverloadedError` leave SDAM state alone. */
    fun isOverloaded(labels: Set<String>): Boolean = ApplicationError.SYSTEM_OVERLOADED_ERROR_LABEL in labels
}
