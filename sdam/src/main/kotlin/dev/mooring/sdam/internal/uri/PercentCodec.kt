package dev.mooring.sdam.internal.uri

import dev.mooring.sdam.InvalidConnectionStringException
import java.io.ByteArrayOutputStream
import java.nio.ByteBuffer
import java.nio.charset.CharacterCodingException
import java.nio.charset.CodingErrorAction

/** RFC 3986 percent-decoding and -encoding for connection strings. Stateless. */
internal object PercentCodec {
    /**
     * Decodes `%XX` escapes (as UTF-8). `+` is kept as is. Throws
     * [InvalidConnectionStringException] naming [what] for a `%` not followed by two hex
     * digits or escapes that are not UTF-8; the text is quoted only when [showText].
     */
    fun decode(text: String, what: String, showText: Boolean = true): String {
        if (text.indexOf('%') < 0) return text
        val quoted = if (showText) " '$text'" else ""
        val out = ByteArrayOutputStream(text.length)
        var i = 0
        while (i < text.length) {
            val ch = text[i]
            if (ch == '%') {
                if (i + 2 >= text.length) {
                    throw InvalidConnectionStringException("invalid percent-encoding in $what$quoted: '%' must be followed by two hex digits")
                }
                val hi = hex(text[i + 1])
                val lo = hex(text[i + 2])
                if (hi < 0 || lo < 0) {
                    throw InvalidConnectionStringException("invalid percent-encoding in $what$quoted: '%' must be followed by two hex digits")
                }
                out.write(hi * 16 + lo)
                i += 3
            } else {
                val end = if (Character.isHighSurrogate(ch) && i + 1 < text.length) i + 2 else i + 1
                out.write(text.substring(i, end).toByteArray(Charsets.UTF_8))
                i = end
            }
        }
        val decoder = Charsets.UTF_8.newDecoder()
            .onMalformedInput(CodingErrorAction.REPORT)
            .onUnmappableCharacter(CodingErrorAction.REPORT)
        return try {
            decoder.decode(ByteBuffer.wrap(out.toByteArray())).toString()
        } catch (e: CharacterCodingException) {
            throw InvalidConnectionStringException("invalid percent-encoding in $what$quoted: the escapes are not UTF-8")
        }
    }

    private fun hex(c: Char): Int = when (c) {
        in '0'..'9' -> c - '0'
        in 'a'..'f' -> c - 'a' + 10
        in 'A'..'F' -> c - 'A' + 10
        else -> -1
    }

    private const val UNRESERVED = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"

    /** Percent-encodes every byte of [text]'s UTF-8 except RFC 3986 unreserved characters and [keep]. */
    fun encode(text: String, keep: String = ""): String {
        val sb = StringBuilder(text.length)
        for (b in text.toByteArray(Charsets.UTF_8)) {
            val c = (b.toInt() and 0xff)
            if (c < 0x80 && (UNRESERVED.indexOf(c.toChar()) >= 0 || keep.indexOf(c.toChar()) >= 0)) {
                sb.append(c.toChar())
            } else {
                sb.append('%').append("0123456789ABCDEF"[c shr 4]).append("0123456789ABCDEF"[c and 0xf])
            }
        }
        return sb.toString()
    }
}
