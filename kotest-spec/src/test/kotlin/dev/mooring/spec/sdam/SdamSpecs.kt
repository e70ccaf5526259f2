package dev.mooring.spec.sdam

import dev.mooring.spec.specSuite
import io.kotest.core.spec.style.FunSpec

/** Spec runner for `sdam/rs` (replica set discovery). */
class SdamReplicaSetSpec : FunSpec({ specSuite("sdam/rs", SdamJsonRunner::cases) })

/** Spec runner for `sdam/single` (direct connections). */
class SdamSingleSpec : FunSpec({ specSuite("sdam/single", SdamJsonRunner::cases) })

/** Spec runner for `sdam/sharded`. */
class SdamShardedSpec : FunSpec({ specSuite("sdam/sharded", SdamJsonRunner::cases) })

/** Spec runner for `sdam/errors` (application error handling, pool generations). */
class SdamErrorsSpec : FunSpec({ specSuite("sdam/errors", SdamJsonRunner::cases) })

/** Spec runner for `sdam/monitoring` (SDAM events). */
class SdamMonitoringSpec : FunSpec({ specSuite("sdam/monitoring", SdamJsonRunner::cases) })

/** Spec runner for `sdam/load-balanced`. */
class SdamLoadBalancedSpec : FunSpec({ specSuite("sdam/load-balanced", SdamJsonRunner::cases) })
