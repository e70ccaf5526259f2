package dev.mooring.spec.unified

import java.io.File
import java.util.concurrent.TimeUnit

/**
 * A test-kit deployment in a child JVM (`TestKitServerMain`, on this JVM's class path), reached
 * only through the connection strings it prints ([environment]: `MONGODB_URI`,
 * `MONGODB_TOPOLOGY`, and for a load balancer `SINGLE_MONGOS_LB_URI`, `MULTI_MONGOS_LB_URI`).
 * The child stops when its standard input closes ([close]), and so also when this JVM dies.
 * Not thread-safe; [close] is idempotent.
 */
class TestKitProcess private constructor(private val process: Process, val environment: Map<String, String>) : AutoCloseable {
    override fun close() {
        if (!process.isAlive) return
        process.outputStream.close()
        if (!process.waitFor(10, TimeUnit.SECONDS)) process.destroyForcibly().waitFor()
    }

    companion object {
        private const val MAIN = "dev.mooring.testkit.deployment.TestKitServerMain"

        /** Starts a [topology] deployment (see `TestKitServerMain`) and waits for its connection strings. */
        fun start(topology: String, vararg extra: String): TestKitProcess {
            val java = File(System.getProperty("java.home"), "bin/java").path
            val command = listOf(java, "-cp", System.getProperty("java.class.path"), MAIN, "--topology", topology, "--until-stdin-closes") + extra
            val process = ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start()
            try {
                val lines = process.inputStream.bufferedReader()
                val env = LinkedHashMap<String, String>()
                while (true) {
                    val line = lines.readLine() ?: error("TestKitServerMain ended before it was ready (exit ${process.waitFor()})")
                    if (line == "READY") break
                    if ('=' in line) env[line.substringBefore('=')] = line.substringAfter('=')
                }
                return TestKitProcess(process, env)
            } catch (t: Throwable) {
                process.destroyForcibly()
                throw t
            }
        }
    }
}
