package dev.mooring.cmap.internal.connection

import dev.mooring.events.InternalMooringApi

/**
 * Not API ([InternalMooringApi], for `sdam`'s tracer): the driver version the handshake sends as
 * `client.driver.version` (handshake.md), which open-telemetry.md's "Tracer Attributes" ask the
 * tracer's `version` to follow. Thread-safe.
 */
@InternalMooringApi
public object DriverVersion {
    /** Mooring's version, exactly as the handshake reports it. */
    public val value: String get() = ClientMetadata.driverVersion
}
