package dev.mooring.sdam

import dev.mooring.events.MooringException

/**
 * Settings that break a rule of the specifications (for example `directConnection=true`
 * with several hosts, or `loadBalanced=true` with a replica set name), whether they came
 * from a connection string or from the Kotlin DSL.
 *
 * The message names the offending option and never contains a password. Immutable and
 * safe to share between threads.
 */
public open class InvalidSettingsException(message: String, cause: Throwable? = null) : MooringException(message, cause)

/**
 * A connection string that cannot be parsed or whose options break a rule of the
 * connection string, URI options, auth, load balancer or seedlist discovery specs.
 *
 * The message names the offending part or option and never contains the password, even
 * when the password itself is malformed. Immutable and safe to share between threads.
 */
public class InvalidConnectionStringException(message: String, cause: Throwable? = null) :
    InvalidSettingsException(message, cause)
