package dev.mooring.cmap.internal.auth.gssapi

import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.withContext
import java.net.InetAddress
import java.util.Hashtable
import javax.naming.directory.InitialDirContext

/** CANONICALIZE_HOST_NAME (auth.md "Hostname Canonicalization"). */
internal enum class Canonicalization { NONE, FORWARD, FORWARD_AND_REVERSE;

    companion object {
        /** From the mechanism property: `none`/`false`/absent, `forward`, `forwardAndReverse`/`true`. */
        fun of(value: Any?): Canonicalization = when (value) {
            null, false, "false", "none" -> NONE
            true, "true", "forwardAndReverse" -> FORWARD_AND_REVERSE
            "forward" -> FORWARD
            else -> throw IllegalArgumentException(
                "CANONICALIZE_HOST_NAME must be one of none, forward, forwardAndReverse, true, false; was '$value'",
            )
        }
    }
}

/** The DNS lookups canonicalization needs. Implementations are thread-safe and may block (callers run them off the event loop). */
internal interface HostLookups {
    /** The host's addresses (empty when it has none). */
    fun addresses(host: String): List<InetAddress>

    /** The host's CNAME target, or null when it has none. */
    fun cname(host: String): String?

    /** The PTR name of [address], or null when it has none. */
    fun reverse(address: InetAddress): String?
}

/** The JVM's resolver for addresses and reverse lookups, JNDI's DNS provider for CNAME records. Stateless. */
internal object JdkHostLookups : HostLookups {
    override fun addresses(host: String): List<InetAddress> = InetAddress.getAllByName(host).toList()

    override fun cname(host: String): String? {
        val env = Hashtable<String, String>().apply { put("java.naming.factory.initial", "com.sun.jndi.dns.DnsContextFactory") }
        val ctx = InitialDirContext(env)
        try {
            val attr = ctx.getAttributes(host, arrayOf("CNAME")).get("CNAME") ?: return null
            return (attr.get() as? String)?.removeSuffix(".")
        } finally {
            ctx.close()
        }
    }

    override fun reverse(address: InetAddress): String? {
        val name = InetAddress.getByAddress(address.address).canonicalHostName
        // the JDK returns the literal address when the reverse lookup fails
        return name.takeIf { it != address.hostAddress }
    }
}

/**
 * The auth.md canonicalization algorithm: the first address of the host, CNAMEs followed to the
 * end of the chain, then (forwardAndReverse) the reverse name of the address; lower-cased. Any
 * lookup that fails or finds nothing falls back to what was known so far (in the end to [host]),
 * as the spec requires. Stateless; thread-safe; the lookups run on Dispatchers.IO.
 */
internal class HostCanonicalizer(private val lookups: HostLookups = JdkHostLookups) {
    suspend fun canonicalize(host: String, mode: Canonicalization): String {
        if (mode == Canonicalization.NONE) return host
        return withContext(Dispatchers.IO) {
            val address = try {
                lookups.addresses(host).firstOrNull()
            } catch (e: Exception) {
                null
            } ?: return@withContext host
            var name = host
            val seen = HashSet<String>()
            while (seen.add(name.lowercase())) {
                val next = try {
                    lookups.cname(name)
                } catch (e: Exception) {
                    null
                } ?: break
                name = next
            }
            if (mode == Canonicalization.FORWARD_AND_REVERSE) {
                val reversed = try {
                    lookups.reverse(address)
                } catch (e: Exception) {
                    null
                }
                (reversed ?: name).lowercase()
            } else {
                name.lowercase()
            }
        }
    }
}
