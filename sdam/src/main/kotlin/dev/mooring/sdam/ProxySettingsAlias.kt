package dev.mooring.sdam

/**
 * The SOCKS5 proxy settings of a cluster; the type lives in `cmap` (every connection uses it), see
 * [dev.mooring.cmap.ProxySettings]. Build it through the DSL's `proxy(...)` or the `proxy*` URI
 * options, which report bad values as [InvalidSettingsException].
 */
public typealias ProxySettings = dev.mooring.cmap.ProxySettings

/** [ProxySettings] with its validation failures reported as [InvalidSettingsException]. */
internal fun proxySettings(host: String, port: Int, username: String?, password: String?): ProxySettings =
    try {
        ProxySettings(host, port, username, password)
    } catch (e: IllegalArgumentException) {
        throw InvalidSettingsException(e.message ?: "invalid proxy settings", e)
    }
