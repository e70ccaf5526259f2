package dev.mooring.testkit.wire

/** A client message the test kit's servers cannot read (bad length, unknown section kind, checksum mismatch, ...). */
class WireProtocolException(message: String, cause: Throwable? = null) : java.io.IOException(message, cause)
