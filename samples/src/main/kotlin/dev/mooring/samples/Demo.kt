package dev.mooring.samples

import dev.mooring.samples.demo.runDemo
import kotlinx.coroutines.CompletableDeferred
import kotlin.system.exitProcess

/**
 * The demo a new user runs first (`samples/demo`; see `samples/demo --help`). Ctrl-C (SIGINT)
 * and SIGTERM end the run the normal way: the summary is printed and the exit code is 0.
 */
fun main(args: Array<String>) {
    val stop = CompletableDeferred<Unit>()
    for (signal in listOf("INT", "TERM")) {
        try {
            sun.misc.Signal.handle(sun.misc.Signal(signal)) { stop.complete(Unit) }
        } catch (_: IllegalArgumentException) {
            // this platform does not let us handle it: the JVM's default applies
        }
    }
    exitProcess(runDemo(args, stop = stop))
}
