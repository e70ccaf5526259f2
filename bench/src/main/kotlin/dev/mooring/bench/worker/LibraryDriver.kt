package dev.mooring.bench.worker

/**
 * What one library does for each scenario, inside its own worker JVM. Every method runs one
 * cell and returns its report metrics (keys of the bench report). Methods run one at a time.
 */
interface LibraryDriver {
    /** End-to-end ping with [CellCommand.callers] concurrent callers against [CellCommand.target]. */
    fun ping(cmd: CellCommand): Map<String, Double>

    /** Client creation → first ping, and creation → topology known, in this (fresh) JVM. */
    fun coldStart(cmd: CellCommand): Map<String, Double>

    /** Checkout + checkin pairs on a pool of fake connections (no I/O). */
    fun poolOnly(cmd: CellCommand): Map<String, Double>

    /** [CellCommand.count] suspended checkouts: heap while they wait and the time to drain them. */
    fun waiters(cmd: CellCommand): Map<String, Double>

    /** Election → new primary visible, [CellCommand.count] elections; streaming or polling per scenario. */
    fun failover(cmd: CellCommand): Map<String, Double>

    /** One workload task of the drivers' benchmark suite ([dev.mooring.bench.workload.WorkloadTask]); see [dev.mooring.bench.workload.TaskIterations]. */
    fun workload(cmd: CellCommand): Map<String, Double> = throw NotApplicable("${cmd.scenario.key} is not measured for this library")
}

/** A cell this library cannot run, with the reason that goes into the report's notes. */
class NotApplicable(reason: String) : Exception(reason)
