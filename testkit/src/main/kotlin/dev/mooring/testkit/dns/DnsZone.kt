package dev.mooring.testkit.dns

import org.xbill.DNS.ARecord
import org.xbill.DNS.DClass
import org.xbill.DNS.Name
import org.xbill.DNS.Rcode
import org.xbill.DNS.Record
import org.xbill.DNS.SRVRecord
import org.xbill.DNS.TXTRecord
import org.xbill.DNS.Type
import java.net.InetAddress

/**
 * An in-memory DNS zone for [DnsTestServer]: A, AAAA, SRV and TXT records by owner name (names
 * compare case-insensitively, as in DNS), changeable at any time while a server answers from it,
 * plus fault injection ([failWith] answers every query with an error code, [dropQueries] leaves
 * queries unanswered so clients time out).
 *
 * Thread-safe: every method may be called from any thread; one lock guards the records.
 *
 * ```
 * val zone = DnsZone()
 * zone.addSrv("_mongodb._tcp.test1.example.com", "localhost.example.com", 27017, ttl = 60)
 * zone.addTxt("test1.example.com", "replicaSet=rs0")
 * zone.addA("localhost.example.com", "127.0.0.1")
 * ```
 */
class DnsZone {
    private val lock = Any()
    private val records = LinkedHashMap<Name, MutableList<Record>>() // guarded by lock

    @Volatile
    private var failure: Int? = null

    @Volatile
    private var dropping = false

    /** Adds [record]. */
    fun add(record: Record) {
        synchronized(lock) { records.getOrPut(key(record.name)) { ArrayList() } += record }
    }

    /** Adds an SRV record `name -> target:port` (priority and weight 0). */
    fun addSrv(name: String, target: String, port: Int, ttl: Long = 86_400, priority: Int = 0, weight: Int = 0) =
        add(SRVRecord(name(name), DClass.IN, ttl, priority, weight, port, name(target)))

    /** Adds one TXT record made of [strings] (a client joins them). */
    fun addTxt(name: String, vararg strings: String, ttl: Long = 86_400) =
        add(TXTRecord(name(name), DClass.IN, ttl, strings.toList()))

    /** Adds an A record `name -> ipv4`. */
    fun addA(name: String, ipv4: String, ttl: Long = 86_400) =
        add(ARecord(name(name), DClass.IN, ttl, InetAddress.getByName(ipv4)))

    /** Removes every record of [name] with [type] (`Type.SRV`, ...), or of every type when [type] is null. */
    fun remove(name: String, type: Int? = null) {
        synchronized(lock) {
            val k = key(name(name))
            val list = records[k] ?: return
            if (type == null) list.clear() else list.removeAll { it.type == type }
            if (list.isEmpty()) records.remove(k)
        }
    }

    /** Replaces the SRV records of [name] with [targets] (`host` to `port`), all with [ttl]. */
    fun replaceSrv(name: String, targets: List<Pair<String, Int>>, ttl: Long = 86_400) {
        synchronized(lock) {
            remove(name, Type.SRV)
            targets.forEach { (host, port) -> addSrv(name, host, port, ttl) }
        }
    }

    /** From now on every query is answered with [rcode] (for example `Rcode.SERVFAIL`); null answers normally again. */
    fun failWith(rcode: Int?) {
        failure = rcode
    }

    /** From now on queries get no answer at all (the client times out) while [drop] is true. */
    fun dropQueries(drop: Boolean) {
        dropping = drop
    }

    /** The answer to one question: null = do not answer; else the rcode and the answer records. */
    internal fun answer(name: Name, type: Int): Pair<Int, List<Record>>? {
        if (dropping) return null
        failure?.let { return it to emptyList() }
        synchronized(lock) {
            val all = records[key(name)] ?: return Rcode.NXDOMAIN to emptyList()
            return Rcode.NOERROR to all.filter { it.type == type || type == Type.ANY }.map { it.withName(name) }
        }
    }

    /** Every record (a snapshot), for diagnostics. */
    fun records(): List<Record> = synchronized(lock) { records.values.flatten() }

    private fun key(n: Name): Name = Name.fromString(n.toString().lowercase())

    companion object {
        /** [text] as an absolute DNS name (a trailing dot is optional). */
        fun name(text: String): Name = Name.fromString(if (text.endsWith(".")) text else "$text.")
    }
}
