package dev.mooring.samples

/** The demo a new user runs first (`samples/demo`). Placeholder until the demo issue lands. */
fun main(args: Array<String>) {
    println("Mooring demo: not yet — the live demo arrives with the demo issue. Arguments: ${args.joinToString(" ")}")
}
