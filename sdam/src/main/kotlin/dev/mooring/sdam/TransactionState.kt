package dev.mooring.sdam

/**
 * Where a session is in the transaction state machine of transactions.md: [None] until
 * [ClientSession.startTransaction], [Starting] until the first command of the transaction is
 * sent, [InProgress] after it, then [Committed] (after `commitTransaction`; [CommittedEmpty]
 * when no command ran, so nothing was sent) or [Aborted]. The next operation outside a
 * transaction returns a committed or aborted session to [None]. Immutable values.
 */
public sealed interface TransactionState {
    /** The spelling of the unified test format and the spec's state names: `none`, `starting`, `in_progress`, `committed`, `aborted`. */
    public val specName: String

    /** No transaction started, or the last one ended and an operation ran since. */
    public data object None : TransactionState { override val specName: String get() = "none" }

    /** Started; no command sent in it yet. */
    public data object Starting : TransactionState { override val specName: String get() = "starting" }

    /** Its first command was sent. */
    public data object InProgress : TransactionState { override val specName: String get() = "in_progress" }

    /** `commitTransaction` was called after commands ran in it (whether the commit succeeded or not). */
    public data object Committed : TransactionState { override val specName: String get() = "committed" }

    /** Committed before any command ran: nothing was sent to the server. */
    public data object CommittedEmpty : TransactionState { override val specName: String get() = "committed" }

    /** `abortTransaction` was called (or the transaction ended by an error the caller aborted). */
    public data object Aborted : TransactionState { override val specName: String get() = "aborted" }
}

/**
 * A transaction API called out of order, or with options a transaction does not support
 * (transactions.md: "Transaction already in progress", "No transaction started", "Cannot call
 * commitTransaction after calling abortTransaction", ...). A client error: nothing was sent.
 */
public class MongoTransactionStateException(message: String) : dev.mooring.events.MooringException(message)
