package dev.mooring.sdam

import dev.mooring.events.ServerAddress
import org.bson.types.ObjectId

/**
 * A pure model of the pool generation of every server (and, in load-balanced mode, every
 * service): starts at 0 and grows by one with every [TopologyAction.ClearPool]. The spec
 * runners use it to check the "clear pool" actions; the live topology carries out the same
 * actions on real pools. Immutable: [apply] returns a new instance.
 */
internal class PoolGenerations private constructor(
    private val byServer: Map<ServerAddress, Int>,
    private val byService: Map<Pair<ServerAddress, ObjectId>, Int>,
) {
    /** All generations 0. */
    public constructor() : this(emptyMap(), emptyMap())

    /** The generation of [address]'s pool (0 when never cleared). */
    public fun generation(address: ServerAddress): Int = byServer[address] ?: 0

    /** The generation of the connections of [address] to [serviceId] (load-balanced mode). */
    public fun generation(address: ServerAddress, serviceId: ObjectId): Int = byService[address to serviceId] ?: 0

    /**
     * Applies [actions] in order: ClearPool increments the generation (of the server, or of
     * the service when it names one); StopMonitoring forgets the server's pool (a server that
     * joins again starts a new pool at 0); other actions change nothing.
     */
    public fun apply(actions: List<TopologyAction>): PoolGenerations {
        if (actions.none { it is TopologyAction.ClearPool || it is TopologyAction.StopMonitoring }) return this
        val servers = HashMap(byServer)
        val services = HashMap(byService)
        for (a in actions) {
            when (a) {
                is TopologyAction.ClearPool -> {
                    val s = a.serviceId
                    if (s == null) servers[a.address] = (servers[a.address] ?: 0) + 1 else services[a.address to s] = (services[a.address to s] ?: 0) + 1
                }
                is TopologyAction.StopMonitoring -> {
                    servers.remove(a.address)
                    services.keys.removeAll { it.first == a.address }
                }
                else -> Unit
            }
        }
        return PoolGenerations(servers, services)
    }

    override fun toString(): String = "PoolGenerations($byServer, $byService)"
}
