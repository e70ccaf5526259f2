package dev.mooring.bench.measure

/** Jain's fairness index over per-caller completion counts. */
object Fairness {
    /**
     * (Σx)² / (n·Σx²): 1.0 when every caller completed the same number of operations, 1/n when
     * one caller did all the work. An empty input, or one where nobody completed anything, is
     * rejected: there is no fairness to speak of.
     */
    fun jain(completions: LongArray): Double {
        require(completions.isNotEmpty()) { "Jain's index needs at least one caller" }
        var sum = 0.0
        var sumSq = 0.0
        for (x in completions) {
            require(x >= 0) { "completion counts cannot be negative, got $x" }
            sum += x
            sumSq += x.toDouble() * x
        }
        require(sumSq > 0) { "no caller completed any operation" }
        return sum * sum / (completions.size * sumSq)
    }
}
