package dev.mooring.testkit.proxy

import java.util.EnumMap

/**
 * The current [Fault] per [Direction]. Thread-safe: every [set] publishes a fresh [Entry], so a
 * counting fault set twice counts again from zero on every connection.
 */
internal class FaultTable {
    /** One setting of a fault; compared by identity. */
    class Entry(val fault: Fault)

    private val entries = EnumMap<Direction, Entry>(Direction::class.java).apply {
        Direction.entries.forEach { put(it, Entry(Fault.None)) }
    }

    @Synchronized
    operator fun get(direction: Direction): Entry = entries.getValue(direction)

    @Synchronized
    operator fun set(direction: Direction, fault: Fault) {
        entries[direction] = Entry(fault)
    }
}
