package dev.mooring.cmap.internal.connection

import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.Job
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.launch

class SocketRegistrySpec : FunSpec({
    test("awaitAll tolerates jobs completing (and leaving the registry) while it takes its snapshot") {
        repeat(300) {
            val registry = SocketRegistry()
            val jobs = List(64) { Job() }
            jobs.forEach { registry.register(it) }
            coroutineScope {
                launch(Dispatchers.Default) { jobs.forEach { it.complete() } }
                registry.awaitAll(5_000)
            }
            registry.size shouldBe 0
        }
    }
})
