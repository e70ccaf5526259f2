package dev.mooring.bench.official

import dev.mooring.bench.worker.CellCommand
import dev.mooring.bench.worker.LibraryDriver
import dev.mooring.bench.worker.NotApplicable
import dev.mooring.bench.workload.TaskIterations
import dev.mooring.bench.workload.ParallelTaskOps
import dev.mooring.bench.workload.WorkloadTask

/**
 * The official Kotlin coroutine driver (`mongodb-driver-kotlin-coroutine`): the workload tasks
 * only ([CoroutineWorkload]; the ODM tasks: [CoroutineOdm]). Its pool and SDAM are the reactive-streams driver's, which the
 * `java-reactive` rows of the other scenarios already measure.
 */
class KotlinCoroutineDriver : LibraryDriver {
    override fun workload(cmd: CellCommand): Map<String, Double> {
        val task = WorkloadTask.of(cmd.scenario)
        if (task.isGridFs || task.isGridFsMulti) throw NotApplicable("the Kotlin coroutine driver has no GridFS API")
        val ops = when {
            task.isParallel -> CoroutineParallel(task, cmd.target, ParallelTaskOps.files(task, TaskIterations.operationsOf(cmd, task)), ParallelTaskOps.outDir(task, "kotlin-coroutine"))
            task.isOdm -> CoroutineOdm(task, cmd.target, TaskIterations.operationsOf(cmd, task))
            else -> CoroutineWorkload(task, cmd.target, TaskIterations.operationsOf(cmd, task))
        }
        return TaskIterations.measure(cmd, task, ops)
    }

    override fun ping(cmd: CellCommand): Map<String, Double> = throw NotApplicable(WORKLOADS_ONLY)
    override fun coldStart(cmd: CellCommand): Map<String, Double> = throw NotApplicable(WORKLOADS_ONLY)
    override fun poolOnly(cmd: CellCommand): Map<String, Double> = throw NotApplicable(WORKLOADS_ONLY)
    override fun waiters(cmd: CellCommand): Map<String, Double> = throw NotApplicable(WORKLOADS_ONLY)
    override fun failover(cmd: CellCommand): Map<String, Double> = throw NotApplicable(WORKLOADS_ONLY)

    private companion object {
        const val WORKLOADS_ONLY = "the coroutine driver wraps the reactive-streams driver (measured as java-reactive): workload tasks only"
    }
}
