package dev.mooring.sdam

import dev.mooring.events.MooringException

/** The base of the errors server selection raises without waiting (as opposed to a selection timeout). */
public open class ServerSelectionException(message: String) : MooringException(message)

/** A read preference that cannot be used with this topology (for example maxStalenessSeconds below the allowed minimum). */
public class InvalidReadPreferenceException(message: String) : ServerSelectionException(message)
