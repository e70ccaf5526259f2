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
 * retried (with `w: "majority"`). Retries stop 120 s after the call, or after the cluster's
 * timeoutMS when set; the last error is then thrown (as a [MongoOperationTimeoutException]
 * under timeoutMS). Any other error is thrown at once. When [block] commits or aborts the
 * transaction itself, nothing more is done.
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
public suspend fun <T> ClientSession.withTransaction(options: TransactionOptions = TransactionOptions(), block: suspend (ClientSession) -> T): T {
    val timeoutMS = clusterTimeoutMS?.takeIf { it > 0 }
    return ConvenientTransaction(this, options, timeoutMS ?: ConvenientTransaction.DEFAULT_LIMIT_MS, timeoutMS != null, block).run()
}

/**
 * [ClientSession.withTransaction] in a session of its own: starts a session ([MongoCluster.startSession]
 * with [sessionOptions]), runs [block] in a transaction with [options] and ends the session,
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
    block: suspend (ClientSession) -> T,
): T = startSession(sessionOptions).use { it.withTransaction(options, block) }
