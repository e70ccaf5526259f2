package dev.mooring.testkit.dns

import org.xbill.DNS.Type

/**
 * Reads records in the zone-file-like layout of the spec READMEs into a [DnsZone]: one record
 * per line, `name ttl class type data`, where data is `address` for A/AAAA, `port target` (the
 * seedlist README's short form) or `priority weight port target` for SRV, and one or more
 * quoted strings for TXT. Header lines (`Record TTL Class ...`), blank lines and lines starting
 * with `;` or `#` are skipped. Stateless.
 */
object ZoneText {
    /** Adds every record of [text] to [zone] and returns how many were added. Throws [IllegalArgumentException] for a malformed record line. */
    fun load(zone: DnsZone, text: String): Int {
        var n = 0
        for (raw in text.lines()) {
            val line = raw.trim()
            if (line.isEmpty() || line.startsWith(";") || line.startsWith("#") || line.startsWith("Record")) continue
            val head = Regex("""^(\S+)\s+(\d+)\s+IN\s+(A|AAAA|SRV|TXT)\s+(.*)$""").matchEntire(line)
                ?: throw IllegalArgumentException("not a record line: '$line'")
            val (name, ttlText, type, data) = head.destructured
            val ttl = ttlText.toLong()
            when (type) {
                "A", "AAAA" -> zone.add(
                    org.xbill.DNS.Record.newRecord(DnsZone.name(name), Type.value(type), org.xbill.DNS.DClass.IN, ttl, java.net.InetAddress.getByName(data.trim()).address),
                )
                "SRV" -> {
                    val f = data.trim().split(Regex("\\s+"))
                    when (f.size) {
                        2 -> zone.addSrv(name, f[1], f[0].toInt(), ttl)
                        4 -> zone.addSrv(name, f[3], f[2].toInt(), ttl, priority = f[0].toInt(), weight = f[1].toInt())
                        else -> throw IllegalArgumentException("bad SRV data in '$line'")
                    }
                }
                "TXT" -> {
                    val strings = Regex("\"((?:[^\"\\\\]|\\\\.)*)\"").findAll(data).map { it.groupValues[1] }.toList()
                    require(strings.isNotEmpty()) { "TXT record without quoted strings: '$line'" }
                    zone.addTxt(name, *strings.toTypedArray(), ttl = ttl)
                }
            }
            n++
        }
        return n
    }

    /** The contents of every fenced ```dns block of a Markdown [markdown] text. */
    fun dnsBlocks(markdown: String): String =
        Regex("```dns\\s*\\n(.*?)```", RegexOption.DOT_MATCHES_ALL).findAll(markdown).joinToString("\n") { it.groupValues[1] }
}
