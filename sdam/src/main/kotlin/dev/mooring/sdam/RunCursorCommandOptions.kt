package dev.mooring.sdam

import org.bson.BsonValue

/** How `timeoutMS` applies to a cursor (client-side-operations-timeout.md, "Cursors"). */
public enum class TimeoutMode {
    /** `timeoutMS` bounds the cursor's whole life: the initial command, every getMore and nothing else. The default for non-tailable cursors. */
    CURSOR_LIFETIME,

    /** `timeoutMS` bounds the initial command and each getMore separately. The default (and the only mode) for tailable cursors. */
    ITERATION,
}

/** The cursor type a cursor-returning command asked for (`tailable`, `awaitData`), as run-command.md's `cursorType`. */
public enum class CursorType {
    /** An ordinary cursor: drained when the server reports cursor id 0. */
    NON_TAILABLE,

    /** `tailable: true`: an empty batch is not the end; getMores go on until the cursor is closed. */
    TAILABLE,

    /** `tailable: true, awaitData: true`: each getMore waits on the server up to [RunCursorCommandOptions.maxTimeMS] for data. */
    TAILABLE_AWAIT,
}

/**
 * The options of [MongoCluster.runCursorCommand] (run-command.md `RunCursorCommandOptions` and
 * the getMore options). Immutable; validated at construction ([IllegalArgumentException]).
 *
 * [batchSize], [maxTimeMS] and [comment] pertain to `getMore` commands only; the initial command
 * is sent as given (put its own `batchSize`, `comment` or `maxTimeMS` in the command document).
 * [cursorType] must match the `tailable`/`awaitData` fields of the command: a mismatch is
 * undefined behaviour (run-command.md). Setting both `timeoutMS` and [maxTimeMS] is not
 * supported and fails with [IllegalArgumentException] when the cursor is started, except for a
 * [CursorType.TAILABLE_AWAIT] cursor whose [maxTimeMS] (the await time) is below `timeoutMS`.
 */
public data class RunCursorCommandOptions(
    /** Selects the server of the initial command; every getMore and the killCursors go to that server. */
    val readPreference: ReadPreference = ReadPreference.PRIMARY,
    /** The explicit session to run in; null runs in an implicit session held for the cursor's lifetime. */
    val session: ClientSession? = null,
    /** This cursor's `timeoutMS` (0: none); null inherits [MongoClusterSettings.timeoutMS]. */
    val timeoutMS: Long? = null,
    /** How `timeoutMS` applies (setting it without an effective `timeoutMS` fails when the cursor is started); null: [TimeoutMode.ITERATION] for tailable cursors, else [TimeoutMode.CURSOR_LIFETIME]. */
    val timeoutMode: TimeoutMode? = null,
    /** The cursor type the command asked for. */
    val cursorType: CursorType = CursorType.NON_TAILABLE,
    /** `batchSize` of each getMore (positive); null lets the server choose. */
    val batchSize: Int? = null,
    /** `maxTimeMS` of each getMore (non-negative; for a tailable-await cursor, how long the server waits for data). */
    val maxTimeMS: Long? = null,
    /** `comment` of each getMore. */
    val comment: BsonValue? = null,
) {
    init {
        require(batchSize == null || batchSize > 0) { "batchSize must be positive, got $batchSize" }
        require(maxTimeMS == null || maxTimeMS >= 0) { "maxTimeMS must not be negative, got $maxTimeMS" }
        require(timeoutMS == null || timeoutMS >= 0) { "timeoutMS must not be negative, got $timeoutMS" }
        require(!(cursorType != CursorType.NON_TAILABLE && timeoutMode == TimeoutMode.CURSOR_LIFETIME)) {
            "timeoutMode CURSOR_LIFETIME is not allowed for a $cursorType cursor (client-side-operations-timeout.md)"
        }
    }
}
