package dev.mooring.cmap.internal.wire

import org.bson.BsonBinaryWriter
import org.bson.BsonDocument
import org.bson.codecs.BsonDocumentCodec
import org.bson.codecs.EncoderContext
import org.bson.io.BasicOutputBuffer

/** Little-endian writing helpers over the driver's [BasicOutputBuffer]. Stateless; thread-safe. */
internal object BsonWriting {
    private val codec = BsonDocumentCodec()
    private val encoderContext = EncoderContext.builder().build()
    /**
     * Writes [doc] and returns its encoded size; throws [WireFormatException] when it exceeds [maxSize].
     * [writer], when given, is a [BsonBinaryWriter] over [out] that is reused for every document
     * written to [out] (a binary writer writes top-level documents one after another); after a
     * failure it must be dropped.
     */
    fun writeDocument(out: BasicOutputBuffer, doc: BsonDocument, maxSize: Int, what: String, writer: BsonBinaryWriter? = null): Int =
        writeBody(out, doc, null, maxSize, what, writer)

    /** [writeDocument] for a command body: [doc] (an [AppendedCommand] from its parts) with [trailer]'s fields set (see [CommandBody]). */
    fun writeBody(out: BasicOutputBuffer, doc: BsonDocument, trailer: BodyTrailer?, maxSize: Int, what: String, writer: BsonBinaryWriter? = null): Int {
        val start = out.position
        try {
            if (trailer == null && doc !is AppendedCommand) {
                if (writer != null) codec.encode(writer, doc, encoderContext) else BsonBinaryWriter(out).use { codec.encode(it, doc, encoderContext) }
            } else {
                CommandBody.write(out, doc, trailer)
            }
        } catch (e: RuntimeException) {
            throw WireFormatException("cannot encode $what: ${e.message}", e)
        }
        val size = out.position - start
        if (size > maxSize) throw WireFormatException("$what is $size bytes, larger than the limit of $maxSize bytes")
        return size
    }

    fun writeCString(out: BasicOutputBuffer, s: String, what: String) {
        if (s.indexOf('\u0000') >= 0) throw WireFormatException("$what must not contain a NUL character")
        out.writeBytes(s.toByteArray(Charsets.UTF_8))
        out.write(0)
    }

    /** Writes the header with a placeholder length; [patchLength] fills it in. */
    fun writeHeader(out: BasicOutputBuffer, requestId: Int, responseTo: Int, opCode: Int) {
        out.writeInt32(0)
        out.writeInt32(requestId)
        out.writeInt32(responseTo)
        out.writeInt32(opCode)
    }

    /** Sets messageLength at offset 0 and checks it against [maxMessageSizeBytes]; returns the bytes. */
    fun finish(out: BasicOutputBuffer, maxMessageSizeBytes: Int): ByteArray {
        finish(out, 0, maxMessageSizeBytes)
        return out.toByteArray()
    }

    /** Sets messageLength of the message that starts at [base] (it ends at the position) and checks it. */
    fun finish(out: BasicOutputBuffer, base: Int, maxMessageSizeBytes: Int) {
        val len = out.position - base
        if (len > maxMessageSizeBytes) {
            throw WireFormatException("message is $len bytes, larger than maxMessageSizeBytes $maxMessageSizeBytes")
        }
        out.writeInt32(base, len)
    }
}
