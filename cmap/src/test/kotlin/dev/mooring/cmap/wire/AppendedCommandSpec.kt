package dev.mooring.cmap.wire

import dev.mooring.cmap.internal.wire.AppendedCommand
import dev.mooring.cmap.internal.wire.BodyTrailer
import dev.mooring.cmap.internal.wire.CommandBody
import dev.mooring.cmap.internal.wire.OpMsg
import dev.mooring.cmap.internal.wire.OpMsgCodec
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonInt64
import org.bson.BsonString
import org.bson.BsonValue

/** The copy that AppendedCommand and BodyTrailer replace: the command cloned, each field put in turn. */
private fun copied(command: BsonDocument, appended: List<Pair<String, BsonValue>>, trailer: List<Pair<String, BsonValue>>): BsonDocument =
    command.clone().also { d -> (appended + trailer).forEach { (k, v) -> d[k] = v } }

class AppendedCommandSpec : FunSpec({
    val lsid = BsonDocument("id", BsonString("session"))
    val cases = listOf(
        "fields new to the command" to Triple(
            BsonDocument("ping", BsonInt32(1)), listOf("lsid" to lsid, "\$clusterTime" to BsonDocument("t", BsonInt32(3))), listOf("\$db" to BsonString("admin")),
        ),
        "a field the command has keeps its position with the new value" to Triple(
            BsonDocument("find", BsonString("c")).append("maxTimeMS", BsonInt32(5)).append("filter", BsonDocument()),
            listOf("maxTimeMS" to BsonInt64(99), "lsid" to lsid), listOf("\$db" to BsonString("test"), "apiVersion" to BsonString("1")),
        ),
        "the same name appended twice: first position, last value; the trailer wins over both" to Triple(
            BsonDocument("insert", BsonString("c")).append("\$db", BsonString("caller's")),
            listOf("txnNumber" to BsonInt64(1), "apiVersion" to BsonString("x"), "txnNumber" to BsonInt64(2)),
            listOf("\$db" to BsonString("test"), "apiVersion" to BsonString("1"), "apiStrict" to org.bson.BsonBoolean(true)),
        ),
        "an empty command" to Triple(BsonDocument(), listOf("lsid" to lsid), emptyList()),
    )

    for ((name, case) in cases) {
        val (command, appended, trailerFields) = case
        test("encodes and reads as the copy it replaces: $name") {
            val before = command.clone()
            val doc = appended.fold(command as BsonDocument) { d, (k, v) -> AppendedCommand.append(d, k, v) }
            val trailer = trailerFields.takeIf { it.isNotEmpty() }?.let { f -> BodyTrailer(f.map { it.first }.toTypedArray(), f.map { it.second }.toTypedArray()) }
            val expected = copied(command, appended, trailerFields)

            OpMsgCodec.encode(OpMsg(7, 0, 0, doc, trailer = trailer)) shouldBe OpMsgCodec.encode(OpMsg(7, 0, 0, expected))
            CommandBody.asSent(doc, trailer) shouldBe expected
            CommandBody.asSent(doc, trailer).keys.toList() shouldBe expected.keys.toList()
            CommandBody.firstKey(doc, trailer) shouldBe expected.keys.first()
            // the lazy reads answer from the parts, before anything is built
            val withAppended = copied(command, appended, emptyList())
            for (k in withAppended.keys + "absent") {
                doc.containsKey(k) shouldBe withAppended.containsKey(k)
                doc[k] shouldBe withAppended[k]
            }
            // then it is a plain document: iteration, equality, mutation
            doc.keys.toList() shouldBe withAppended.keys.toList()
            doc shouldBe withAppended
            doc["extra"] = BsonInt32(1)
            doc.size shouldBe withAppended.size + 1
            command shouldBe before // the caller's document was never changed
        }
    }

    test("appending to a built document starts from it, so a mutation made to it is kept") {
        val first = AppendedCommand.append(BsonDocument("ping", BsonInt32(1)), "lsid", lsid)
        first["comment"] = BsonString("added")
        val second = AppendedCommand.append(first, "maxTimeMS", BsonInt64(10))
        second.keys.toList() shouldBe listOf("ping", "lsid", "comment", "maxTimeMS")
    }

    test("the direct BSON writer writes every BSON type as BsonBinaryWriter does") {
        val oid = org.bson.types.ObjectId()
        val nested = BsonDocument("a", BsonInt32(1)).append("deeper", BsonDocument("b", org.bson.BsonArray(listOf(BsonString("x"), org.bson.BsonNull.VALUE))))
        val all = BsonDocument("find", BsonString("c\u00e9\ud83d\ude00"))
            .append("i32", BsonInt32(-7)).append("i64", BsonInt64(Long.MAX_VALUE)).append("dbl", org.bson.BsonDouble(1.5))
            .append("t", org.bson.BsonBoolean.TRUE).append("f", org.bson.BsonBoolean.FALSE).append("doc", nested)
            .append("arr", org.bson.BsonArray((0 until 70).map { BsonInt32(it) }))
            .append("bin", org.bson.BsonBinary(byteArrayOf(1, 2, 3))).append("uuid", org.bson.BsonBinary(java.util.UUID.randomUUID()))
            .append("old", org.bson.BsonBinary(org.bson.BsonBinarySubType.OLD_BINARY, byteArrayOf(9)))
            .append("oid", org.bson.BsonObjectId(oid)).append("date", org.bson.BsonDateTime(123)).append("ts", org.bson.BsonTimestamp(5, 6))
            .append("dec", org.bson.BsonDecimal128(org.bson.types.Decimal128.parse("1.25"))).append("null", org.bson.BsonNull.VALUE)
            .append("undef", org.bson.BsonUndefined()).append("min", org.bson.BsonMinKey()).append("max", org.bson.BsonMaxKey())
            .append("re", org.bson.BsonRegularExpression("^a", "mi")).append("js", org.bson.BsonJavaScript("f()"))
            .append("sym", org.bson.BsonSymbol("s")).append("jsws", org.bson.BsonJavaScriptWithScope("g()", BsonDocument("v", BsonInt32(2))))
            .append("ptr", org.bson.BsonDbPointer("db.c", oid)).append("raw", org.bson.RawBsonDocument.parse("{r: [1, {s: 'q'}]}"))
        val trailer = BodyTrailer(arrayOf("\$db"), arrayOf(BsonString("test")))
        val expected = all.clone().append("\$db", BsonString("test"))
        OpMsgCodec.encode(OpMsg(3, 0, 0, all, trailer = trailer)) shouldBe OpMsgCodec.encode(OpMsg(3, 0, 0, expected))
    }

    test("a NUL in a key is an encoding error, as with BsonBinaryWriter") {
        val trailer = BodyTrailer(arrayOf("\$db"), arrayOf(BsonString("test")))
        io.kotest.assertions.throwables.shouldThrow<dev.mooring.cmap.internal.wire.WireFormatException> {
            OpMsgCodec.encode(OpMsg(3, 0, 0, BsonDocument("a\u0000b", BsonInt32(1)), trailer = trailer))
        }
    }

    test("Java serialization writes the document it reads as") {
        val doc = AppendedCommand.append(BsonDocument("ping", BsonInt32(1)), "lsid", lsid)
        val bytes = java.io.ByteArrayOutputStream().also { out -> java.io.ObjectOutputStream(out).use { it.writeObject(doc) } }.toByteArray()
        val back = java.io.ObjectInputStream(bytes.inputStream()).use { it.readObject() }
        back shouldBe BsonDocument("ping", BsonInt32(1)).append("lsid", lsid)
    }
})
