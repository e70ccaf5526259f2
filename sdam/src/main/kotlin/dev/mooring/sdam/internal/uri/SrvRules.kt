package dev.mooring.sdam.internal.uri

import dev.mooring.sdam.InvalidConnectionStringException

/**
 * The URI-level rules of initial-dns-seedlist-discovery.md for the answers of the SRV and TXT
 * lookups: SRV targets must share the SRV name's `{domainname}`, and at most one TXT record may
 * hold only `authSource`, `replicaSet` and `loadBalanced`. Stateless.
 */
internal object SrvRules {
    private val txtAllowed = listOf("authSource", "replicaSet", "loadBalanced")

    private fun normalize(host: String) = host.lowercase().removeSuffix(".")

    /**
     * True when [target] may be used for [srvHost]: it ends with `.{domainname}` (the SRV name
     * without its first label when it has three or more labels, else the whole name), so it
     * always has at least one more label than the shared part.
     */
    fun isValidTarget(srvHost: String, target: String): Boolean {
        val srv = normalize(srvHost)
        val t = normalize(target)
        val labels = srv.split('.')
        val domain = if (labels.size >= 3) labels.drop(1).joinToString(".") else srv
        return t.endsWith(".$domain") && t.length > domain.length + 1
    }

    /** The options of the TXT records (each record's strings already joined): canonical name to value. */
    fun txtOptions(records: List<String>): Map<String, String> {
        if (records.isEmpty()) return emptyMap()
        if (records.size > 1) throw InvalidConnectionStringException("more than one TXT record found for the SRV name")
        val out = LinkedHashMap<String, String>()
        for (segment in records.single().split('&')) {
            if (segment.isEmpty()) continue
            val eq = segment.indexOf('=')
            if (eq <= 0) throw InvalidConnectionStringException("the TXT record holds a misformatted option; expected key=value pairs")
            val key = PercentCodec.decode(segment.substring(0, eq), "a TXT record option key")
            val name = txtAllowed.firstOrNull { it.equals(key, ignoreCase = true) }
                ?: throw InvalidConnectionStringException(
                    "option '$key' is not allowed in a TXT record; only ${txtAllowed.joinToString()} are",
                )
            out[name] = PercentCodec.decode(segment.substring(eq + 1), "the TXT record value of '$name'")
        }
        return out
    }
}
