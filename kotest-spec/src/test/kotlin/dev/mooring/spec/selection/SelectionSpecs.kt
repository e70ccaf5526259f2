package dev.mooring.spec.selection

import dev.mooring.spec.specSuite
import io.kotest.core.spec.style.FunSpec

/** Spec runner for `server-selection/server_selection`. */
class ServerSelectionSpec : FunSpec({ specSuite("server-selection/server_selection", SelectionRunners::selection) })

/** Spec runner for `server-selection/rtt` (EWMA of round-trip times). */
class RoundTripTimeSpec : FunSpec({ specSuite("server-selection/rtt", SelectionRunners::rtt) })

/** Spec runner for `server-selection/in_window` (operation-count based choice in the latency window). */
class InWindowSelectionSpec : FunSpec({ specSuite("server-selection/in_window", SelectionRunners::inWindow) })

/** Spec runner for `max-staleness`. */
class MaxStalenessSpec : FunSpec({ specSuite("max-staleness", SelectionRunners::selection) })
