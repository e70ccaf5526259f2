package dev.mooring.cmap.internal.pool

import dev.mooring.cmap.Connection
import dev.mooring.cmap.ConnectionDescription
import dev.mooring.cmap.ConnectionPurpose
import dev.mooring.cmap.EstablishableConnection
import dev.mooring.cmap.MongoServerException
import dev.mooring.cmap.PoolClearedException
import dev.mooring.cmap.internal.command.CommandRequestObserver
import dev.mooring.cmap.internal.command.ObservedCommand
import dev.mooring.events.ServerAddress
import kotlin.coroutines.cancellation.CancellationException
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.isActive
import org.bson.BsonDocument
import org.bson.types.ObjectId

/**
 * Life-cycle states of a pooled connection (the CMAP spec's Connection.state). Only
 * [PoolCounters.moveTo] changes a connection's state, so the gauges follow it.
 */
internal enum class ConnState {
    /** Created, being established (counts as pending and in total). */
    PENDING,

    /** Established, in the available list (counts in total). */
    AVAILABLE,

    /** Checked out (counts as in use and in total). */
    IN_USE,

    /** Closed: counts nowhere; terminal. */
    CLOSED,
}

/**
 * The pool's wrapper around one [EstablishableConnection]; it is what checkOut returns. One
 * wrapper per physical connection, reused across checkouts (no allocation per checkout).
 * [state], [generation], [serviceId] and [availableSinceNanos] are guarded by the pool's lock
 * (the hand-off through the lock or a deferred makes them visible to the holder). [errored] and
 * [interrupted] may be set from any thread.
 */
internal class PooledConnection(
    @JvmField val owner: PoolStateMachine,
    @JvmField val raw: EstablishableConnection,
    override val id: Long,
    @JvmField var gen: Int,
    @JvmField val createdNanos: Long,
) : Connection, ObservedCommand, CheckOutOutcome, Handed, Established {
    /** Changed only by [PoolCounters.moveTo]. */
    @JvmField var state: ConnState = ConnState.PENDING
    @JvmField var availableSinceNanos: Long = 0L
    @JvmField var serviceId: ObjectId? = null

    /** What the holder keeps it for (load-balanced connection tracking); guarded by the pool's lock, changed only by [PoolCounters]. */
    @JvmField var purpose: ConnectionPurpose = ConnectionPurpose.OPERATION

    /** Set when an operation failed with a network or protocol error, or the holder closed it. */
    @Volatile @JvmField var errored: Boolean = false

    /** Set by clear(interruptInUseConnections = true); the raw connection is closed at the same time. */
    @Volatile @JvmField var interrupted: Boolean = false

    override val address: ServerAddress get() = raw.address
    override val generation: Int get() = gen
    override val description: ConnectionDescription? get() = raw.description
    override val isClosed: Boolean get() = raw.isClosed || state == ConnState.CLOSED

    override suspend fun command(database: String, command: BsonDocument): BsonDocument =
        guarded { raw.command(database, command) }

    override suspend fun command(database: String, command: BsonDocument, observer: CommandRequestObserver): BsonDocument =
        guarded {
            val r = raw
            if (r is ObservedCommand) r.command(database, command, observer) else r.command(database, command)
        }

    /** Runs [block] (a command on [raw]) if this connection is checked out and not interrupted, and maps its failures. */
    private suspend inline fun guarded(block: () -> BsonDocument): BsonDocument {
        check(state == ConnState.IN_USE) { "connection $id to $address is not checked out" }
        if (interrupted) throw PoolClearedException(address, PoolClearedException.interruptedMessage(address))
        try {
            return block()
        } catch (e: CancellationException) {
            // Closing the socket under an in-flight read surfaces as the socket reader's cancellation,
            // although this caller was not cancelled: report the interruption instead.
            if (interrupted && currentCoroutineContext().isActive) {
                throw PoolClearedException(address, PoolClearedException.interruptedMessage(address), e)
            }
            throw e
        } catch (e: Throwable) {
            if (interrupted) throw PoolClearedException(address, PoolClearedException.interruptedMessage(address), e)
            if (e is MongoServerException && e.perishesConnection) errored = true // the one place a connection's own error perishes it
            throw e
        }
    }

    /** Closes the socket; the pool closes the wrapper (as errored) when it is checked in. */
    override fun close() {
        errored = true
        raw.close()
    }

    /** Interrupts whatever the connection is doing (closes its socket); later operations fail with a retryable error. */
    fun interrupt() {
        interrupted = true
        raw.close()
    }

    override fun toString(): String = "PooledConnection(id=$id, address=$address, generation=$gen)"

    // Identity equality; the hash is the pool-unique id, so pool bookkeeping is deterministic.
    override fun equals(other: Any?): Boolean = this === other

    override fun hashCode(): Int = id.hashCode()
}
