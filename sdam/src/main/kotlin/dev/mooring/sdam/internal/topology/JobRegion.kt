package dev.mooring.sdam.internal.topology

import kotlinx.coroutines.Job
import kotlin.coroutines.Continuation
import kotlin.coroutines.CoroutineContext
import kotlin.coroutines.intrinsics.startCoroutineUninterceptedOrReturn
import kotlin.coroutines.intrinsics.suspendCoroutineUninterceptedOrReturn

/**
 * Runs [block] on the calling coroutine with [job] in place of the caller's job, so that
 * cancelling [job] cancels only what [block] is suspended in (the caller's cancellation reaches
 * [block] when [job] is the caller's child). Unlike `withContext(job)` it creates no coroutine
 * object: a [block] that completes without suspending costs one context and one continuation;
 * one that suspends resumes its caller directly on the thread that resumed it, which the
 * caller's own dispatcher chose ([block] inherits it). The caller's result is never discarded
 * by a late cancellation of [job].
 *
 * Stateless; safe from any coroutine.
 */
internal suspend fun <T> runWithJob(job: Job, block: suspend () -> T): T =
    suspendCoroutineUninterceptedOrReturn { caller ->
        block.startCoroutineUninterceptedOrReturn(JobRegionCompletion(caller, caller.context + job))
    }

/** [runWithJob] for a [block] with a receiver: a non-capturing [block] costs no object per call. */
internal suspend fun <R, T> runWithJob(job: Job, receiver: R, block: suspend R.() -> T): T =
    suspendCoroutineUninterceptedOrReturn { caller ->
        block.startCoroutineUninterceptedOrReturn(receiver, JobRegionCompletion(caller, caller.context + job))
    }

/** Completes the caller with [block]'s outcome once [block] resumed after suspending. */
private class JobRegionCompletion<T>(
    private val caller: Continuation<T>,
    override val context: CoroutineContext,
) : Continuation<T> {
    override fun resumeWith(result: Result<T>) = caller.resumeWith(result)
}
