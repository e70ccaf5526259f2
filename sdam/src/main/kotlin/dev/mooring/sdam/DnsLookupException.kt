package dev.mooring.sdam

import dev.mooring.events.MooringException

/**
 * A DNS query of a `mongodb+srv` seed list failed: the name server could not be reached or
 * answered with an error (SERVFAIL, REFUSED, ...), or the query timed out. [recordName] and
 * [recordType] name the record that failed (for example `_mongodb._tcp.cluster0.example.com`
 * and `SRV`). An answer that is valid DNS but breaks the seedlist spec's rules (no SRV records,
 * a target outside the domain, two TXT records, a forbidden TXT option) is an
 * [InvalidConnectionStringException] instead. Immutable apart from error labels; thread-safe.
 */
public class DnsLookupException(
    /** The queried name, without the trailing dot. */
    public val recordName: String,
    /** The queried record type: `SRV`, `TXT`, `A` or `AAAA`. */
    public val recordType: String,
    message: String,
    cause: Throwable? = null,
) : MooringException("DNS $recordType lookup of '$recordName' failed: $message", cause)
