package dev.mooring.samples.service

/**
 * The command line of `samples/ktor-service [URI] [--port N] [--host H] [--database NAME]`.
 * Immutable.
 */
data class ServiceArgs(
    /** A `mongodb://` or `mongodb+srv://` connection string; null: start an embedded mongo-java-server. */
    val uri: String? = null,
    /** The HTTP port (0: a free one). */
    val port: Int = 8080,
    /** The interface to listen on. */
    val host: String = "127.0.0.1",
    /** The database of the `bookmarks` collection. */
    val database: String = BookmarkService.DEFAULT_DATABASE,
    /** Print the usage and exit. */
    val help: Boolean = false,
) {
    companion object {
        /** The usage text. */
        const val USAGE: String = """usage: samples/ktor-service [URI] [options]
  URI                mongodb:// or mongodb+srv:// connection string (default: an embedded mongo-java-server)
  --port N           HTTP port (default 8080; 0: a free port)
  --host H           interface to listen on (default 127.0.0.1)
  --database NAME    database of the bookmarks collection (default mooring_sample)
  --help             this text"""

        /** Parses [args]; [IllegalArgumentException] with a message saying what is wrong. */
        fun parse(args: Array<String>): ServiceArgs {
            var result = ServiceArgs()
            var i = 0
            fun value(name: String): String {
                require(i + 1 < args.size) { "$name needs a value" }
                return args[++i]
            }
            while (i < args.size) {
                val arg = args[i]
                result = when {
                    arg == "--port" -> result.copy(port = value(arg).let { v -> v.toIntOrNull()?.takeIf { it in 0..65535 } ?: throw IllegalArgumentException("--port needs a port number, got '$v'") })
                    arg == "--host" -> result.copy(host = value(arg))
                    arg == "--database" -> result.copy(database = value(arg))
                    arg == "--help" || arg == "-h" -> result.copy(help = true)
                    arg.startsWith("-") -> throw IllegalArgumentException("unknown option '$arg'")
                    result.uri != null -> throw IllegalArgumentException("only one URI may be given, got '${result.uri}' and '$arg'")
                    arg.startsWith("mongodb://") || arg.startsWith("mongodb+srv://") -> result.copy(uri = arg)
                    else -> throw IllegalArgumentException("'$arg' is not a mongodb:// or mongodb+srv:// connection string")
                }
                i++
            }
            return result
        }
    }
}
