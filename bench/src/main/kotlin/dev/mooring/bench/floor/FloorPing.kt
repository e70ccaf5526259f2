package dev.mooring.bench.floor

import org.bson.BsonBinaryWriter
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString
import org.bson.codecs.BsonDocumentCodec
import org.bson.codecs.EncoderContext
import org.bson.io.BasicOutputBuffer
import java.nio.ByteBuffer
import java.nio.ByteOrder

/**
 * The floor's one request, encoded once: an OP_MSG (opCode 2013, flagBits 0) with a single
 * kind-0 section `{ping: 1, $db: "admin"}`. Every send reuses these bytes, request id included
 * (the servers do not check it; the floor does not read the reply's responseTo).
 */
internal object FloorPing {
    private const val OP_MSG = 2013
    private const val REQUEST_ID = 1

    fun encoded(): ByteBuffer {
        val body = BasicOutputBuffer()
        BsonBinaryWriter(body).use { w ->
            BsonDocumentCodec().encode(w, BsonDocument("ping", BsonInt32(1)).append("\$db", BsonString("admin")), EncoderContext.builder().build())
        }
        val doc = body.toByteArray()
        val length = 16 + 4 + 1 + doc.size
        val buf = ByteBuffer.allocateDirect(length).order(ByteOrder.LITTLE_ENDIAN)
        buf.putInt(length).putInt(REQUEST_ID).putInt(0).putInt(OP_MSG)
        buf.putInt(0) // flagBits
        buf.put(0) // section kind 0: body
        buf.put(doc)
        buf.flip()
        return buf
    }
}
