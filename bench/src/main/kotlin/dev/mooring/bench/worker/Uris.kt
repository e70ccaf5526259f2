package dev.mooring.bench.worker

/** Appends `key=value` to a `mongodb://…/?…` URI (the harness always passes URIs with `/?`). */
fun withOption(uri: String, key: String, value: Any): String {
    require("/?" in uri) { "benchmark URIs must contain '/?', got $uri" }
    return if (uri.endsWith("?")) "$uri$key=$value" else "$uri&$key=$value"
}
