package dev.mooring.cmap.internal.wire

/**
 * Wire protocol opcodes (OP_MSG.md, OP_COMPRESSED.md). Constants only; thread-safe.
 */
internal object OpCode {
    /** Legacy reply to an OP_QUERY. */
    internal const val OP_REPLY: Int = 1

    /** Legacy query, used only for the legacy hello of old clients. */
    internal const val OP_QUERY: Int = 2004

    /** A compressed wrapper around another message (compression comes later). */
    internal const val OP_COMPRESSED: Int = 2012

    /** The extensible message format every modern command uses. */
    internal const val OP_MSG: Int = 2013
}
