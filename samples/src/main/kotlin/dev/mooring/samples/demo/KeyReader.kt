package dev.mooring.samples.demo

import java.io.File
import java.io.InputStream

/**
 * Reads single key presses from the terminal (the live view's `s` and `q`): puts the terminal
 * in non-canonical, no-echo mode with `stty` (restored by [close]) and reads standard input on
 * a daemon thread (a blocking read cannot be cancelled, so it is not a coroutine). Ctrl-C keeps
 * working: signals stay enabled.
 */
class KeyReader private constructor(private val savedMode: String?, onKey: (Char) -> Unit, input: InputStream) : AutoCloseable {
    private val thread = Thread({
        try {
            while (true) {
                val b = input.read()
                if (b < 0) break
                onKey(b.toChar())
            }
        } catch (_: Exception) {
            // standard input closed: no more keys
        }
    }, "mooring-demo-keys").apply { isDaemon = true; start() }

    override fun close() {
        if (savedMode != null) stty(savedMode)
    }

    companion object {
        /** Starts reading keys; [onKey] runs on the reader thread. */
        fun start(onKey: (Char) -> Unit): KeyReader {
            val saved = stty("-g")?.trim()
            if (saved != null) stty("-icanon -echo min 1")
            return KeyReader(saved, onKey, System.`in`)
        }

        private fun stty(args: String): String? = try {
            val p = ProcessBuilder(listOf("sh", "-c", "stty $args < /dev/tty"))
                .redirectInput(ProcessBuilder.Redirect.INHERIT).redirectError(File("/dev/null")).start()
            val out = p.inputStream.bufferedReader().readText()
            if (p.waitFor() == 0) out else null
        } catch (_: Exception) {
            null
        }
    }
}
