package dev.mooring.sdam.internal.srv

import dev.mooring.events.MooringException
import dev.mooring.events.ServerAddress
import dev.mooring.sdam.ConnectionString
import dev.mooring.sdam.DnsResolverSettings
import dev.mooring.sdam.InvalidConnectionStringException
import dev.mooring.sdam.InvalidSettingsException
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.sdam.applySrvLookup
import dev.mooring.sdam.internal.settings.CredentialRules
import dev.mooring.sdam.internal.uri.PercentCodec
import dev.mooring.sdam.internal.uri.SrvRules
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.Job
import kotlinx.coroutines.async
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.future.asCompletableFuture
import java.util.concurrent.ExecutionException
import kotlin.random.Random

/**
 * Internal API, not stable: the initial DNS seedlist discovery of initial-dns-seedlist-discovery.md.
 * Looks up the SRV records of `_{srvServiceName}._tcp.{srvHost}` and the TXT records of
 * `{srvHost}` (concurrently, each bounded by [DnsResolverSettings.timeoutMS]) and applies them
 * with [applySrvLookup] (the URI-level rules: shared domain, one TXT record with allowed
 * options only, URI options winning over TXT ones, srvMaxHosts, the loadBalanced and
 * replicaSet interplay). When the settings name a DNS server, the resolved settings also carry
 * a `ConnectionSettings.hostNameResolver` that resolves the servers' names through it.
 *
 * Errors: [dev.mooring.sdam.DnsLookupException] when a query fails (naming the record),
 * [InvalidConnectionStringException] when the answers break a rule (no SRV records, a target
 * outside the domain, ...). Stateless and thread-safe; the suspending functions are
 * cancellable; the blocking ones run the lookups on `Dispatchers.IO` and block only the
 * calling thread (for the synchronous `MongoCluster` factory functions: the one I/O the SDAM spec
 * allows there).
 */
internal object SrvSeedlistDiscovery {
    /** The floor of rescanSRVIntervalMS, and the interval when no TTL is known. */
    internal const val MIN_RESCAN_INTERVAL_MS: Long = 60_000

    /** The SRV name queried for [settings]: `_{srvServiceName}._tcp.{srvHost}`. */
    @JvmStatic
    internal fun srvName(settings: MongoClusterSettings): String =
        "_${settings.srvServiceName}._tcp.${requireNotNull(settings.srvHost) { "not a mongodb+srv cluster" }}"

    /** rescanSRVIntervalMS for a lookup whose lowest TTL was [minTtlSeconds] (null: unknown). */
    @JvmStatic
    internal fun rescanInterval(minTtlSeconds: Long?): Long =
        maxOf(MIN_RESCAN_INTERVAL_MS, (minTtlSeconds ?: 0L) * 1000)

    /**
     * Resolves the `mongodb+srv` connection string [cs] through [dns], with the exact option
     * precedence of the URI (an option the URI states wins over the TXT record's).
     */
    internal suspend fun resolve(
        cs: ConnectionString,
        dns: DnsResolverSettings = cs.settings.dnsResolver,
        random: Random = Random.Default,
    ): SrvResolution {
        if (!cs.isSrv) throw InvalidConnectionStringException("SRV lookup needs a mongodb+srv connection string")
        val client = DnsClient(dns)
        val (answer, txt) = lookup(client, cs.settings)
        val resolved = cs.applySrvLookup(answer.targets, txt, random)
        val txtOptions = SrvRules.txtOptions(txt)
        return SrvResolution(finish(resolved, dns, client), answer.targets, txtOptions, rescanInterval(answer.minTtlSeconds)).also {
            it.authSource = resolved.connection.credential?.source
                ?: (cs.typedOptions["authSource"] as? String) ?: txtOptions["authSource"]
        }
    }

    /**
     * Resolves [settings] whose [MongoClusterSettings.srvHost] is set (through
     * [MongoClusterSettings.dnsResolver]). Settings do not record which values were stated
     * explicitly, so a TXT option applies where the settings hold the default: `replicaSet`
     * when it is null, `loadBalanced` when it is false, `authSource` when a credential's
     * source is `admin`. Use [resolve] with a [ConnectionString] for the URI's exact rule.
     */
    internal suspend fun resolve(settings: MongoClusterSettings, random: Random = Random.Default): SrvResolution {
        val srvHost = settings.srvHost ?: throw InvalidSettingsException("SRV lookup needs settings with an srvHost")
        val client = DnsClient(settings.dnsResolver)
        val (answer, txt) = lookup(client, settings)
        // The URI-level rules, with exactly the options the settings state explicitly.
        val stated = buildList {
            add("srvServiceName=${PercentCodec.encode(settings.srvServiceName)}")
            if (settings.srvMaxHosts != 0) add("srvMaxHosts=${settings.srvMaxHosts}")
            settings.replicaSet?.let { add("replicaSet=${PercentCodec.encode(it)}") }
            if (settings.loadBalanced) add("loadBalanced=true")
        }
        val probe = ConnectionString.parse("mongodb+srv://$srvHost/?${stated.joinToString("&")}")
        val rules = probe.applySrvLookup(answer.targets, txt, random)
        val txtOptions = SrvRules.txtOptions(txt)
        var credential = settings.connection.credential
        val txtSource = txtOptions["authSource"]
        if (credential != null && txtSource != null && credential.source == "admin") {
            if (txtSource.isEmpty()) throw InvalidConnectionStringException("the TXT record's authSource must not be empty")
            credential = CredentialRules.create(
                credential.mechanism, credential.username, credential.password, txtSource, null, credential.mechanismProperties,
            )
        }
        val resolved = settings.copy(
            hosts = rules.hosts,
            replicaSet = rules.replicaSet,
            connection = settings.connection.copy(credential = credential, loadBalanced = rules.loadBalanced),
        )
        return SrvResolution(finish(resolved, settings.dnsResolver, client), answer.targets, txtOptions, rescanInterval(answer.minTtlSeconds)).also {
            it.authSource = credential?.source ?: txtOptions["authSource"]
        }
    }

    /**
     * What a synchronous cluster constructor starts with: [settings] unchanged when they hold
     * hosts already (with the DNS host-name resolver installed when a name server is
     * configured), else the resolved seed list. Blocks the calling thread for the lookup.
     */
    @JvmStatic
    internal fun prepareBlocking(settings: MongoClusterSettings): SrvResolution {
        if (settings.srvHost == null || settings.hosts.isNotEmpty()) {
            val client = DnsClient(settings.dnsResolver)
            return SrvResolution(finish(settings, settings.dnsResolver, client), settings.hosts, emptyMap(), MIN_RESCAN_INTERVAL_MS)
        }
        return blocking { resolve(settings) }
    }

    /**
     * The settings of [uri] with [dns] as their resolver; for `mongodb+srv` resolved with the
     * URI's exact option precedence. Blocks the calling thread for the lookup. Throws
     * [InvalidConnectionStringException] for a malformed URI or broken rule, and
     * [dev.mooring.sdam.DnsLookupException] when a query fails.
     */
    @JvmStatic
    @JvmOverloads
    internal fun settingsFromUri(uri: String, dns: DnsResolverSettings = DnsResolverSettings.SYSTEM): MongoClusterSettings {
        val cs = ConnectionString.parse(uri)
        if (!cs.isSrv) return cs.settings.copy(dnsResolver = dns)
        return blocking { resolve(cs, dns) }.settings
    }

    private suspend fun lookup(client: DnsClient, settings: MongoClusterSettings): Pair<SrvAnswer, List<String>> = coroutineScope {
        val srv = async { client.srv(srvName(settings)) }
        val txt = async { client.txt(settings.srvHost!!) }
        srv.await() to txt.await()
    }

    private fun finish(settings: MongoClusterSettings, dns: DnsResolverSettings, client: DnsClient): MongoClusterSettings {
        val withDns = if (settings.dnsResolver == dns) settings else settings.copy(dnsResolver = dns)
        if (dns.nameServer == null || withDns.connection.hostNameResolver != null) return withDns
        return withDns.copy(connection = withDns.connection.copy(hostNameResolver = DnsHostNameResolver(client)))
    }

    /** Runs [block] on Dispatchers.IO in a coroutine owned by this call and waits for it. */
    private fun <T> blocking(block: suspend () -> T): T {
        val owner = Job()
        val future = CoroutineScope(owner + Dispatchers.IO).async { block() }.asCompletableFuture()
        try {
            return future.get()
        } catch (e: ExecutionException) {
            throw e.cause ?: e
        } catch (e: InterruptedException) {
            future.cancel(true)
            Thread.currentThread().interrupt()
            throw MooringException("interrupted while resolving the mongodb+srv seed list", e)
        } finally {
            owner.cancel()
        }
    }

    internal fun verified(srvHost: String, targets: List<ServerAddress>): Pair<List<ServerAddress>, List<ServerAddress>> =
        targets.partition { !it.isUnixSocket && SrvRules.isValidTarget(srvHost, it.host) }
}
