package dev.mooring.sdam

import dev.mooring.events.ServerAddress
import dev.mooring.sdam.internal.settings.CredentialRules
import dev.mooring.sdam.internal.uri.SrvRules
import kotlin.random.Random

/**
 * Applies the answers of the DNS lookups for a `mongodb+srv` connection string
 * (initial-dns-seedlist-discovery.md) and returns the settings to start the cluster with. The
 * lookups themselves are the caller's: [srvRecords] are the targets (host and port) of
 * `_{srvServiceName}._tcp.{srvHost}`, [txtRecords] the TXT records of `{srvHost}` with each
 * record's strings already joined.
 *
 * Every SRV target must share the SRV name's domain (see the spec's "Querying DNS"); there may
 * be at most one TXT record, holding only `authSource`, `replicaSet` and `loadBalanced`, whose
 * values yield to the same options in the URI. When `srvMaxHosts` is positive and smaller than
 * the number of targets, that many are chosen at random (Fisher-Yates with [random]). The
 * result is validated after the TXT options are applied (so `srvMaxHosts` with a TXT
 * `replicaSet`, or `loadBalanced=true` with several targets, is rejected).
 *
 * Throws [InvalidConnectionStringException] for any broken rule. Pure apart from [random];
 * thread-safe; performs no I/O.
 */
internal fun ConnectionString.applySrvLookup(
    srvRecords: List<ServerAddress>,
    txtRecords: List<String>,
    random: Random = Random.Default,
): MongoClusterSettings {
    val srvName = srvHost ?: throw InvalidConnectionStringException("SRV records apply only to a mongodb+srv URI")
    val service = settings.srvServiceName
    if (srvRecords.isEmpty()) throw InvalidConnectionStringException("no SRV records found for _$service._tcp.$srvName")
    for (target in srvRecords) {
        if (target.isUnixSocket || !SrvRules.isValidTarget(srvName, target.host)) {
            throw InvalidConnectionStringException(
                "the SRV record target '${target.host}' does not share the domain of '$srvName'",
            )
        }
    }
    val txt = SrvRules.txtOptions(txtRecords)
    val base = settings
    var hosts = srvRecords.distinct()
    if (base.srvMaxHosts in 1 until hosts.size) hosts = hosts.shuffled(random).take(base.srvMaxHosts)
    return try {
        mongoClusterSettings {
            applySettings(base)
            this.hosts = hosts
            txt["replicaSet"]?.let { if ("replicaSet" !in typedOptions) replicaSet = it }
            txt["loadBalanced"]?.let { v ->
                val b = when (v.lowercase()) {
                    "true" -> true
                    "false" -> false
                    else -> throw InvalidConnectionStringException("the TXT record's loadBalanced must be true or false")
                }
                if ("loadBalanced" !in typedOptions) loadBalanced = b
            }
            val cred = base.connection.credential
            val txtSource = txt["authSource"]
            if (cred != null && txtSource != null && "authSource" !in typedOptions) {
                if (txtSource.isEmpty()) throw InvalidConnectionStringException("the TXT record's authSource must not be empty")
                credential(
                    CredentialRules.create(
                        cred.mechanism, cred.username, cred.password, txtSource, null, cred.mechanismProperties,
                    ),
                )
            }
            if (loadBalanced && this.hosts.size > 1) {
                throw InvalidConnectionStringException("loadBalanced=true requires exactly one host, but the SRV lookup returned ${this.hosts.size}")
            }
        }
    } catch (e: InvalidConnectionStringException) {
        throw e
    } catch (e: InvalidSettingsException) {
        throw InvalidConnectionStringException(e.message ?: "invalid SRV lookup result", e)
    }
}
