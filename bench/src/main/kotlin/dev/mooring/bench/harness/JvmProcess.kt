package dev.mooring.bench.harness

import java.io.BufferedReader
import java.io.File
import java.io.InputStreamReader
import java.io.PrintWriter
import java.util.concurrent.LinkedBlockingQueue
import java.util.concurrent.TimeUnit

/**
 * A child JVM running [mainClass] with this JVM's class path. Its stdout is a line protocol
 * (read with [readLine]); its stderr goes to [log]. [close] closes its stdin (the child's
 * signal to stop), waits briefly, then destroys it. Not thread-safe.
 */
class JvmProcess(val name: String, mainClass: String, args: List<String>, jvmOptions: List<String>, log: File) : AutoCloseable {
    private val process: Process
    private val stdin: PrintWriter
    private val lines = LinkedBlockingQueue<String>()

    init {
        log.parentFile?.mkdirs()
        val java = File(System.getProperty("java.home"), "bin/java").path
        val cmd = listOf(java) + jvmOptions + listOf("-cp", System.getProperty("java.class.path"), mainClass) + args
        process = ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.appendTo(log)).start()
        stdin = PrintWriter(process.outputStream, true)
        val reader = BufferedReader(InputStreamReader(process.inputStream, Charsets.UTF_8))
        Thread({
            try {
                while (true) lines.put(reader.readLine() ?: break)
            } catch (_: java.io.IOException) {
            }
            lines.put(EOF)
        }, "$name-stdout").apply { isDaemon = true }.start()
    }

    /** The child's process id (the ping cells measure their server's CPU by it). */
    val pid: Long get() = process.pid()

    fun send(line: String) {
        stdin.println(line)
        check(!stdin.checkError()) { "$name: its stdin is closed (did it exit? see its log)" }
    }

    /** The next protocol line, waiting at most [timeoutMs]. */
    fun readLine(timeoutMs: Long): String {
        val l = lines.poll(timeoutMs, TimeUnit.MILLISECONDS) ?: throw IllegalStateException("$name: no answer within $timeoutMs ms")
        if (l === EOF) {
            lines.put(EOF)
            throw IllegalStateException("$name exited (code ${runCatching { process.exitValue() }.getOrNull()}); see its log")
        }
        return l
    }

    /** Reads until a line starting with [prefix] and returns the rest of it. */
    fun expect(prefix: String, timeoutMs: Long): String {
        val deadline = System.nanoTime() + timeoutMs * 1_000_000
        while (true) {
            val left = (deadline - System.nanoTime()) / 1_000_000
            val l = readLine(maxOf(left, 1))
            if (l.startsWith(prefix)) return l.removePrefix(prefix).trim()
        }
    }

    override fun close() {
        stdin.close()
        if (!process.waitFor(5, TimeUnit.SECONDS)) {
            process.destroy()
            if (!process.waitFor(5, TimeUnit.SECONDS)) process.destroyForcibly().waitFor()
        }
    }

    private companion object {
        val EOF = String(charArrayOf('\u0000'))
    }
}
