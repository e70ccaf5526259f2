package dev.mooring.samples.demo

/** Thrown for a bad command line; the message says what is wrong, [usage] how to call the demo. */
class DemoArgsException(message: String) : IllegalArgumentException(message) {
    /** The usage text to print after the message. */
    val usage: String get() = DemoArgs.USAGE
}

/**
 * The demo's command line:
 * `samples/demo [URI] [--callers N] [--seconds N] [--json] [--replica-set] [--stepdown-every S] [--dns host:port] [--command-events] [--watch]`.
 */
data class DemoArgs(
    /** A connection string (`mongodb://` or `mongodb+srv://`); null: start an embedded server. */
    val uri: String? = null,
    /** Concurrent callers of the workload. */
    val callers: Int = 16,
    /** Stop after this many seconds; null: run until Ctrl-C (or `q` in the live view). */
    val seconds: Int? = null,
    /** Print every event as a JSON line on standard output (status lines and summary go to standard error). */
    val json: Boolean = false,
    /** Run against the test kit's in-process three-member replica set. */
    val replicaSet: Boolean = false,
    /** With [replicaSet]: step the primary down every this many seconds. */
    val stepdownEverySeconds: Int? = null,
    /** `host:port` of the DNS server for `mongodb+srv` lookups; null: the system resolver. */
    val dns: String? = null,
    /** Show command events (CommandStarted/Succeeded/Failed) in the live view's recent events from the start (key `c` toggles them). */
    val commandEvents: Boolean = false,
    /** Watch the workload's collection with a change stream from the start (key `w` toggles it); needs a replica set. */
    val watch: Boolean = false,
    /** Print the usage and exit. */
    val help: Boolean = false,
) {
    companion object {
        /** The usage text. */
        const val USAGE: String = """usage: samples/demo [URI] [options]
  URI                  mongodb:// or mongodb+srv:// connection string (default: an embedded mongo-java-server)
  --callers N          concurrent callers of the workload (default 16)
  --seconds N          stop after N seconds (default: run until Ctrl-C)
  --json               print every event as a JSON line on stdout (status and summary go to stderr)
  --replica-set        run against an in-process three-member replica set (press s to step the primary down)
  --stepdown-every S   with --replica-set: step the primary down every S seconds
  --dns HOST:PORT      DNS server for mongodb+srv lookups (default: the system resolver)
  --command-events     show command events in the live view's recent events (key c toggles them;
                       by default it shows topology, server, heartbeat-summary and pool events)
  --watch              watch the workload's collection with a change stream and show its events
                       (key w toggles it; needs --replica-set or a replica set's URI)
  --help               this text"""

        /** Parses [args]; throws [DemoArgsException] for anything it does not understand. */
        fun parse(args: Array<String>): DemoArgs {
            var result = DemoArgs()
            var i = 0
            fun value(name: String): String {
                if (i + 1 >= args.size) throw DemoArgsException("$name needs a value")
                i++
                return args[i]
            }
            fun positive(name: String, text: String): Int =
                text.toIntOrNull()?.takeIf { it > 0 } ?: throw DemoArgsException("$name needs a positive whole number, got '$text'")
            while (i < args.size) {
                val arg = args[i]
                result = when {
                    arg == "--callers" -> result.copy(callers = positive(arg, value(arg)))
                    arg == "--seconds" -> result.copy(seconds = positive(arg, value(arg)))
                    arg == "--json" -> result.copy(json = true)
                    arg == "--command-events" -> result.copy(commandEvents = true)
                    arg == "--replica-set" -> result.copy(replicaSet = true)
                    arg == "--watch" -> result.copy(watch = true)
                    arg == "--stepdown-every" -> result.copy(stepdownEverySeconds = positive(arg, value(arg)))
                    arg == "--dns" -> result.copy(dns = value(arg).also { if (!it.contains(':')) throw DemoArgsException("--dns needs host:port, got '$it'") })
                    arg == "--help" || arg == "-h" -> result.copy(help = true)
                    arg.startsWith("-") -> throw DemoArgsException("unknown option '$arg'")
                    result.uri != null -> throw DemoArgsException("only one URI may be given, got '${result.uri}' and '$arg'")
                    arg.startsWith("mongodb://") || arg.startsWith("mongodb+srv://") -> result.copy(uri = arg)
                    else -> throw DemoArgsException("'$arg' is not a mongodb:// or mongodb+srv:// connection string")
                }
                i++
            }
            if (result.replicaSet && result.uri != null) throw DemoArgsException("--replica-set runs its own replica set; do not give a URI as well")
            if (result.stepdownEverySeconds != null && !result.replicaSet) throw DemoArgsException("--stepdown-every needs --replica-set")
            if (result.watch && result.uri == null && !result.replicaSet) throw DemoArgsException("--watch: ${ChangeWatch.NEEDS_REPLICA_SET}")
            if (result.dns != null && result.uri?.startsWith("mongodb+srv://") != true) throw DemoArgsException("--dns applies to mongodb+srv:// URIs only")
            return result
        }
    }
}
