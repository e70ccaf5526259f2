package dev.mooring.cmap.internal.connection

import org.bson.io.BasicOutputBuffer
import java.lang.ref.SoftReference

/**
 * The buffers of a client's large messages (an encoded message, or its OP_COMPRESSED wrapping,
 * too large for the small buffer each connection keeps), shared by the connections of one
 * [dev.mooring.cmap.DefaultConnectionFactory]: a large insert takes a buffer here and gives it
 * back once the message is written, instead of allocating (and zeroing) an array the size of the
 * message per command, then dropping it.
 *
 * [take] returns the smallest retained buffer of at least the capacity asked for, else a new one.
 * [give] retains a buffer while all retained buffers stay within [maxRetainedBytes] (the smallest
 * are let go first), each only softly referenced: the collector takes them back under memory
 * pressure, and always before an `OutOfMemoryError`.
 *
 * Thread-safe (one lock, held for a scan of at most [MAX_RETAINED] entries). A buffer belongs to
 * the caller between [take] and [give]; a buffer that is never given back (a failed write) is
 * simply garbage. Nothing to close.
 */
internal class SendBufferPool(private val maxRetainedBytes: Long = DEFAULT_MAX_RETAINED_BYTES) {
    private class Entry(val capacity: Int, val buffer: SoftReference<BasicOutputBuffer>)

    private val retained = ArrayList<Entry>(MAX_RETAINED)
    private var retainedBytes = 0L

    /** A buffer whose internal array holds at least [minCapacity] bytes, its position 0. */
    fun take(minCapacity: Int): BasicOutputBuffer {
        synchronized(retained) {
            var best = -1
            var i = 0
            while (i < retained.size) {
                val e = retained[i]
                if (e.buffer.get() == null) {
                    removeAt(i) // the collector took it back
                    continue
                }
                if (e.capacity >= minCapacity && (best < 0 || e.capacity < retained[best].capacity)) best = i
                i++
            }
            if (best >= 0) {
                val buffer = retained[best].buffer.get()
                removeAt(best)
                if (buffer != null) {
                    buffer.truncateToPosition(0)
                    return buffer
                }
            }
        }
        return BasicOutputBuffer(minCapacity)
    }

    /** Gives [buffer] back for a later [take]; the caller no longer uses it. */
    fun give(buffer: BasicOutputBuffer) {
        val capacity = buffer.internalBuffer.size
        if (capacity > maxRetainedBytes) return
        synchronized(retained) {
            // let the smallest go while the new one does not fit (a larger buffer serves every smaller message too)
            while (retained.isNotEmpty() && (retainedBytes + capacity > maxRetainedBytes || retained.size >= MAX_RETAINED)) {
                var smallest = 0
                for (i in 1 until retained.size) if (retained[i].capacity < retained[smallest].capacity) smallest = i
                if (retained[smallest].capacity > capacity) return // every retained one is larger: keep those
                removeAt(smallest)
            }
            retained += Entry(capacity, SoftReference(buffer))
            retainedBytes += capacity
        }
    }

    /** The bytes of the buffers retained now (those the collector took back not yet noticed): for tests. */
    internal val retainedCapacity: Long get() = synchronized(retained) { retainedBytes }

    private fun removeAt(i: Int) {
        retainedBytes -= retained[i].capacity
        retained.removeAt(i)
    }

    internal companion object {
        /**
         * Twice the default maxMessageSizeBytes (48,000,000): two connections' largest messages,
         * or their messages and compressed wrappings.
         */
        const val DEFAULT_MAX_RETAINED_BYTES: Long = 96_000_000L

        /** At most this many buffers are retained. */
        const val MAX_RETAINED: Int = 16
    }
}
