package dev.mooring.sdam

import dev.mooring.sdam.internal.ErrorClassification

/**
 * SDAM error handling for application operations (the spec's `handleError` pseudocode) as a
 * pure function. No I/O, no clock, no coroutines; safe to call from any thread. The caller must
 * run it, install the new description and carry out the actions in the same critical section
 * as [TopologyStateMachine] steps.
 */
internal object ErrorHandling {
    /**
     * Applies [error] to [current]. [poolGeneration] is the current generation of the pool the
     * error's connection came from (in load-balanced mode, of the error's serviceId).
     *
     * - Stale errors change nothing: an error generation older than [poolGeneration], or a
     *   topologyVersion not newer than the server's.
     * - State change errors ("not writable primary", "node is recovering", by code; by message
     *   only when there is no code): the server becomes Unknown with the error's
     *   topologyVersion (not in load-balanced mode); the pool is cleared only for shutdown
     *   codes (11600, 91); an immediate check is requested.
     * - Network errors, and any error before the handshake completed (unless labelled
     *   `SystemOverloadedError`): the server becomes Unknown and its pool is cleared (in
     *   load-balanced mode only the service's connections are cleared), and the monitor's
     *   in-progress check is cancelled. A network timeout after the handshake changes nothing.
     * - Every other error changes nothing.
     *
     * The returned actions come in order: those of marking the server Unknown, then
     * ClearPool, then RequestImmediateCheck or CancelCheck.
     */
    @JvmStatic
    public fun onApplicationError(
        current: TopologyDescription,
        error: ApplicationError,
        poolGeneration: Int,
        settings: TopologySettings,
    ): TopologyUpdate {
        val server = current.servers[error.address] ?: return TopologyUpdate.ignored(current)
        if (isStale(server, error, poolGeneration)) return TopologyUpdate.ignored(current)
        val loadBalanced = current.type == TopologyType.LOAD_BALANCED
        val address = error.address

        if (error.kind == ApplicationErrorKind.COMMAND && ErrorClassification.isStateChange(error.code, error.message)) {
            val extra = ArrayList<TopologyAction>()
            if (ErrorClassification.isShutdown(error.code)) extra += TopologyAction.ClearPool(address, if (loadBalanced) error.serviceId else null)
            if (loadBalanced) return actionsOnly(current, extra)
            extra += TopologyAction.RequestImmediateCheck(address)
            val unknown = ServerDescription.unknown(address, error.describe(), error.cause, error.topologyVersion)
            return markUnknown(current, unknown, settings, extra)
        }
        val network = error.kind == ApplicationErrorKind.NETWORK
        if (network || !error.handshakeCompleted) {
            if (ErrorClassification.isOverloaded(error.errorLabels)) return TopologyUpdate.ignored(current)
            if (loadBalanced) {
                return if (error.serviceId != null) actionsOnly(current, listOf(TopologyAction.ClearPool(address, error.serviceId))) else TopologyUpdate.ignored(current)
            }
            val unknown = ServerDescription.unknown(address, error.describe(), error.cause)
            return markUnknown(current, unknown, settings, listOf(TopologyAction.ClearPool(address), TopologyAction.CancelCheck(address)))
        }
        return TopologyUpdate.ignored(current)
    }

    /** True when [error] is stale for [server]: an older pool generation, or a topologyVersion not newer than the server's. */
    @JvmStatic
    public fun isStale(server: ServerDescription, error: ApplicationError, poolGeneration: Int): Boolean {
        val g = error.generation
        if (g != null && g < poolGeneration) return true
        return TopologyVersion.compare(server.topologyVersion, error.topologyVersion) >= 0
    }

    /** True for a "not writable primary" or "node is recovering" error (by code; by message only without a code). */
    @JvmStatic
    public fun isStateChangeError(code: Int?, message: String?): Boolean = ErrorClassification.isStateChange(code, message)

    /** True for the "node is shutting down" codes (11600 InterruptedAtShutdown, 91 ShutdownInProgress). */
    @JvmStatic
    public fun isShutdownError(code: Int?): Boolean = ErrorClassification.isShutdown(code)

    private fun markUnknown(
        current: TopologyDescription,
        unknown: ServerDescription,
        settings: TopologySettings,
        extra: List<TopologyAction>,
    ): TopologyUpdate {
        val update = TopologyStateMachine.onServerDescription(current, unknown, settings)
        if (update.ignored) return actionsOnly(current, extra)
        return TopologyUpdate(update.previous, update.description, update.actions + extra, false, update.plan)
    }

    private fun actionsOnly(current: TopologyDescription, actions: List<TopologyAction>): TopologyUpdate =
        TopologyUpdate(current, current, actions, actions.isEmpty(), emptyList())
}
