package dev.mooring.driver.internal

import dev.mooring.cmap.MongoCommandException
import dev.mooring.cmap.MongoServerException
import dev.mooring.sdam.MongoCursorException
import dev.mooring.sdam.MongoOperationTimeoutException

/**
 * change-streams.md "Resumable Error": which errors of a change stream's getMore it resumes after,
 * judged by the wire version of the connection the failed command used. Stateless.
 */
internal object ResumableChangeStreamError {
    const val LABEL: String = "ResumableChangeStreamError"
    private const val CURSOR_NOT_FOUND = 43

    /** The wire version of MongoDB 4.4, from which servers label resumable errors. */
    private const val WIRE_VERSION_4_4 = 9

    /** The codes resumable on servers before 4.4 (wire version 9), which send no label. */
    private val LEGACY_CODES = setOf(6, 7, 89, 91, 189, 262, 9001, 10107, 11600, 11602, 13435, 13436, 63, 150, 13388, 234, 133)

    /**
     * True when a getMore that failed with [error] on a connection of [wireVersion] is resumed: any
     * error that is not a server error (network, protocol, the cursor's server gone, a pool cleared),
     * CursorNotFound, and the labelled (4.4+) or listed (before) server errors. A CSOT timeout is
     * not: it surfaces, and the next iteration resumes (client-side-operations-timeout.md "Change Streams").
     */
    fun isResumable(error: Throwable, wireVersion: Int): Boolean = when (error) {
        is MongoOperationTimeoutException -> false
        is MongoCommandException -> error.code == CURSOR_NOT_FOUND ||
            if (wireVersion >= WIRE_VERSION_4_4) error.hasErrorLabel(LABEL) else error.code in LEGACY_CODES
        is MongoServerException -> true
        is MongoCursorException -> true
        else -> false
    }
}
