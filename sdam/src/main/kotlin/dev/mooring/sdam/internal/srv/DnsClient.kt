package dev.mooring.sdam.internal.srv

import dev.mooring.events.InvalidServerAddressException
import dev.mooring.events.ServerAddress
import dev.mooring.sdam.DnsLookupException
import dev.mooring.sdam.DnsResolverSettings
import dev.mooring.sdam.InvalidConnectionStringException
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.TimeoutCancellationException
import kotlinx.coroutines.future.await
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeout
import org.xbill.DNS.AAAARecord
import org.xbill.DNS.ARecord
import org.xbill.DNS.DClass
import org.xbill.DNS.ExtendedResolver
import org.xbill.DNS.Message
import org.xbill.DNS.Name
import org.xbill.DNS.Rcode
import org.xbill.DNS.Record
import org.xbill.DNS.Resolver
import org.xbill.DNS.SRVRecord
import org.xbill.DNS.Section
import org.xbill.DNS.SimpleResolver
import org.xbill.DNS.TXTRecord
import org.xbill.DNS.TextParseException
import org.xbill.DNS.Type
import java.net.InetAddress
import java.net.InetSocketAddress
import java.time.Duration

/** The SRV answer for one name: the targets (host and port, in answer order) and the lowest TTL, in seconds (null without records). */
internal class SrvAnswer(val targets: List<ServerAddress>, val minTtlSeconds: Long?)

/**
 * The DNS queries of the seedlist and polling specs, with dnsjava's asynchronous resolver: no
 * thread is blocked while a query is in flight, each query is bounded by
 * [DnsResolverSettings.timeoutMS], and the answers are never cached (a rescan sees the
 * current records). Thread-safe; a query can be cancelled at any suspension point.
 *
 * NXDOMAIN and an empty answer both mean "no records"; any other failure is a
 * [DnsLookupException] naming the record.
 */
internal class DnsClient(private val settings: DnsResolverSettings) {
    @Volatile
    private var resolverRef: Resolver? = null

    /** The SRV records of [name] (`_{service}._tcp.{host}`). */
    suspend fun srv(name: String): SrvAnswer {
        val records = query(name, Type.SRV).filterIsInstance<SRVRecord>()
        val targets = records.map { r ->
            val host = r.target.toString(true)
            try {
                ServerAddress(host, r.port)
            } catch (e: InvalidServerAddressException) {
                throw InvalidConnectionStringException("the SRV record $name -> $host:${r.port} is not a valid server address: ${e.message}", e)
            }
        }
        return SrvAnswer(targets, records.minOfOrNull { it.ttl })
    }

    /** The TXT records of [name], each record's strings joined (RFC 7208 style). */
    suspend fun txt(name: String): List<String> =
        query(name, Type.TXT).filterIsInstance<TXTRecord>().map { it.strings.joinToString("") }

    /** The A then AAAA addresses of [host]; empty when the name server knows none. */
    suspend fun addresses(host: String): List<InetAddress> {
        val v4 = query(host, Type.A).filterIsInstance<ARecord>().map { it.address }
        val v6 = query(host, Type.AAAA).filterIsInstance<AAAARecord>().map { it.address }
        return v4 + v6
    }

    private suspend fun query(name: String, type: Int): List<Record> {
        val typeName = Type.string(type)
        val qname = try {
            Name.fromString(name, Name.root)
        } catch (e: TextParseException) {
            throw DnsLookupException(name, typeName, "'$name' is not a valid DNS name", e)
        }
        val response: Message = try {
            withTimeout(settings.timeoutMS) {
                resolver().sendAsync(Message.newQuery(Record.newRecord(qname, type, DClass.IN))).await()
            }
        } catch (e: TimeoutCancellationException) {
            throw DnsLookupException(name, typeName, "no answer within ${settings.timeoutMS} ms", e)
        } catch (e: CancellationException) {
            throw e
        } catch (e: Exception) {
            throw DnsLookupException(name, typeName, e.message ?: e.toString(), e)
        }
        return when (val rcode = response.rcode) {
            Rcode.NOERROR -> response.getSection(Section.ANSWER).filter { it.type == type }
            Rcode.NXDOMAIN -> emptyList()
            else -> throw DnsLookupException(name, typeName, "the name server answered ${Rcode.string(rcode)}")
        }
    }

    private suspend fun resolver(): Resolver = resolverRef ?: withContext(Dispatchers.IO) {
        // Creating the resolver may read the system's configuration or resolve the server's name.
        val r: Resolver = settings.nameServer?.let { SimpleResolver(InetSocketAddress(InetAddress.getByName(it.host), it.port)) }
            ?: ExtendedResolver()
        r.timeout = Duration.ofMillis(settings.timeoutMS)
        r
    }.also { resolverRef = it }
}
