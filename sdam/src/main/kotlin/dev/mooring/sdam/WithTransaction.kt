package dev.mooring.sdam

import dev.mooring.sdam.internal.session.ConvenientTransaction

/**
 * Runs [block] in a transaction of this session and commits it (transactions-convenient-api.md
 * `withTransaction`); returns [block]'s result.
 *
 * **Retries.** When [block] (or the commit) fails with an error labelled
 * `TransientTransactionError`, the transaction is aborted and the whole of [block] runs again in a
 * new transaction, after a short exponential backoff with jitter: **[block] may run several
 * times**, so it must not have side effects outside the transaction that would be wrong to
 * repeat. A commit failing with `UnknownTransactionCommitResult` (but not MaxTimeMSExpired) is
 * retried (with `w: "majority"`). Any other error is thrown at once. When [block] commits or
 * aborts the transaction itself, nothing more is done.
 *
 * **Time limit.** [timeoutMS] (null: the session's [ClientSessionOptions.defaultTimeoutMS], else
 * the cluster's timeoutMS; 0: none) bounds the whole call (client-side-operations-timeout.md
 * "Convenient Transactions API"): the operations [block] runs **in this session** and the commit
 * share what is left of it, whatever their collection's or database's timeoutMS (operations that
 * do not use the session are not bounded by it); an abort after [block] failed gets a fresh
 * [timeoutMS]. Out of time, the last error is thrown as a [MongoOperationTimeoutException].
 * Without any timeoutMS, retries stop 120 s after the call and the last error is thrown as it is.
 *
 * **Cancellation and errors.** When [block] throws, or the calling coroutine is cancelled while
 * [block] runs, the open transaction is aborted in `NonCancellable` (the abort is sent even though
 * the caller is cancelled) before the error or the cancellation propagates. Cancelled during the
 * commit, nothing is aborted: the commit may have been applied (transactions.md forbids an abort
 * after a commit); the server session is discarded, and the server ends the transaction.
 *
 * [options] are the transaction's ([ClientSession.startTransaction]). Operations in [block] must
 * be given this session to run in the transaction. Run one `withTransaction` at a time per session.
 */
public suspend fun <T> ClientSession.withTransaction(
    options: TransactionOptions = TransactionOptions(),
    timeoutMS: Long? = null,
    block: suspend (ClientSession) -> T,
): T {
    require(timeoutMS == null || timeoutMS >= 0) { "timeoutMS must be >= 0 (0 = no limit), was $timeoutMS" }
    return ConvenientTransaction(this, options, timeoutMS ?: sessionTimeoutMS, block).run()
}

/**
 * [ClientSession.withTransaction] in a session of its own: starts a session ([MongoCluster.startSession]
 * with [sessionOptions]), runs [block] in a transaction with [options] within [timeoutMS] and ends the session,
 * whatever happens. See [ClientSession.withTransaction] for the retries (**[block] may run
 * several times**) and the abort on errors and cancellation.
 *
 * ```
 * cluster.withTransaction { session ->
 *     accounts.updateOne(eq("_id", from), inc("balance", -amount), session = session)
 *     accounts.updateOne(eq("_id", to), inc("balance", amount), session = session)
 * }
 * ```
 */
public suspend fun <T> MongoCluster.withTransaction(
    options: TransactionOptions = TransactionOptions(),
    sessionOptions: ClientSessionOptions = ClientSessionOptions(),
    timeoutMS: Long? = null,
    block: suspend (ClientSession) -> T,
): T = startSession(sessionOptions).use { it.withTransaction(options, timeoutMS, block) }
