@file:OptIn(ExperimentalTime::class, ExperimentalUuidApi::class)

package dev.mooring.driver

import de.bwaldvogel.mongo.MongoServer
import de.bwaldvogel.mongo.backend.memory.MemoryBackend
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.testkit.EventRecorder
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import java.util.UUID
import kotlin.time.ExperimentalTime
import kotlin.time.Instant
import kotlin.uuid.ExperimentalUuidApi
import kotlin.uuid.Uuid
import kotlin.uuid.toJavaUuid
import kotlinx.coroutines.flow.toList
import kotlinx.serialization.Contextual
import kotlinx.serialization.KSerializer
import kotlinx.serialization.SerialName
import kotlinx.serialization.Serializable
import kotlinx.serialization.descriptors.PrimitiveKind
import kotlinx.serialization.descriptors.PrimitiveSerialDescriptor
import kotlinx.serialization.descriptors.SerialDescriptor
import kotlinx.serialization.encoding.Decoder
import kotlinx.serialization.encoding.Encoder
import kotlinx.serialization.modules.SerializersModule
import kotlinx.serialization.modules.overwriteWith
import org.bson.BsonBinarySubType
import org.bson.BsonDateTime
import org.bson.BsonDocument
import org.bson.BsonString
import org.bson.BsonType
import org.bson.types.ObjectId

/** No annotation: `id` should be binary subtype 4, `at` a BSON date. */
@Serializable
data class Reading(@SerialName("_id") val id: Uuid, val at: Instant, val value: Double)

@Serializable
data class Leg(val from: Instant, val tracker: Uuid)

@Serializable
sealed interface Mark {
    @Serializable @SerialName("seen")
    data class Seen(val at: Instant) : Mark
}

@JvmInline
@Serializable
value class Deadline(val at: Instant)

/** Every shape an unannotated Instant/Uuid can take, next to serializers that need bson-kotlinx's own encoder. */
@Serializable
data class Shipment(
    @SerialName("_id") @Contextual val id: ObjectId,
    val eta: Instant?,
    val carrier: Uuid?,
    val stops: List<Instant>,
    val maybe: List<Instant?>,
    val byName: Map<String, Uuid>,
    val byTracker: Map<Uuid, Instant>,
    val legs: List<Leg>,
    val firstLeg: Leg?,
    val mark: Mark,
    val deadline: Deadline,
    @Contextual val extra: BsonDocument,
    val name: String,
)

/** The `@Contextual` path next to unannotated properties. */
@Serializable
data class Mixed(
    @SerialName("_id") @Contextual val id: Uuid,
    @Contextual val at: Instant,
    @Contextual val javaAt: java.time.Instant,
    @Contextual val javaId: UUID,
    val plainAt: Instant,
)

/** A recursive structure: the analysis of which serializers may reach an Instant stops. */
@Serializable
data class Node(val at: Instant, val children: List<Node> = emptyList())

/** A user's serializer of Instant: epoch seconds as an Int64. */
object EpochSecondsSerializer : KSerializer<Instant> {
    override val descriptor: SerialDescriptor = PrimitiveSerialDescriptor("test.EpochSeconds", PrimitiveKind.LONG)

    override fun serialize(encoder: Encoder, value: Instant) = encoder.encodeLong(value.epochSeconds)

    override fun deserialize(decoder: Decoder): Instant = Instant.fromEpochSeconds(decoder.decodeLong())
}

@Serializable
data class Custom(
    @SerialName("_id") val id: Uuid,
    @Serializable(with = EpochSecondsSerializer::class) val withSerializer: Instant,
    @Contextual val fromModule: Instant,
    val plain: Instant,
)

/** Unannotated `kotlin.time.Instant` / `kotlin.uuid.Uuid` stored as BSON date / binary subtype 4 (issue 30). */
class NativeTypesSpec : FunSpec({
    timeout = 120_000

    val t1 = Instant.fromEpochMilliseconds(1_700_000_000_123)
    val t2 = Instant.fromEpochMilliseconds(1_700_000_100_456)
    val t3 = Instant.fromEpochMilliseconds(1_600_000_000_789)

    fun BsonDocument.uuidAt(key: String): UUID {
        val b = getBinary(key)
        b.type shouldBe BsonBinarySubType.UUID_STANDARD.value
        b.data.size shouldBe 16
        return b.asUuid()
    }

    test("an unannotated data class round trips with a binary subtype 4 _id and a date") {
        WireServerFixture.withServer { f ->
            val readings = f.db.collection<Reading>("readings")
            val r = Reading(Uuid.random(), t1, 21.5)
            readings.insertOne(r)
            readings.find().toList() shouldContainExactly listOf(r)

            val raw = f.stored("readings").single()
            raw.uuidAt("_id") shouldBe r.id.toJavaUuid()
            raw["at"]!!.bsonType shouldBe BsonType.DATE_TIME
            raw.getDateTime("at").value shouldBe 1_700_000_000_123
            // the command as sent, not only as stored
            f.started("insert").single().getArray("documents").single().asDocument()["at"] shouldBe BsonDateTime(1_700_000_000_123)
        }
    }

    test("sub-millisecond parts are cut: the stored date is the millisecond at or before the instant") {
        WireServerFixture.withServer { f ->
            val readings = f.db.collection<Reading>("readings")
            val id = Uuid.random()
            readings.insertOne(Reading(id, Instant.fromEpochSeconds(1_700_000_000, 123_999_999), 1.0))
            readings.insertOne(Reading(Uuid.random(), Instant.fromEpochSeconds(-1, 999_999_999), 2.0))
            f.stored("readings").map { it.getDateTime("at").value } shouldContainExactly listOf(1_700_000_000_123, -1)
            readings.find().toList().map { it.at } shouldContainExactly
                listOf(Instant.fromEpochMilliseconds(1_700_000_000_123), Instant.fromEpochMilliseconds(-1))
        }
    }

    test("the server sorts and compares the dates (mongo-java-server's query engine)") {
        val server = MongoServer(MemoryBackend())
        server.bind("127.0.0.1", 0)
        val cluster = MongoCluster(MongoClusterSettings.fromUri("mongodb://127.0.0.1:${server.localAddress.port}/?serverSelectionTimeoutMS=5000"), listOf(EventRecorder()))
        try {
            val readings = cluster.database("iot").collection<Reading>("readings")
            // year 10000: its ISO text ("+10000-...") would sort before the others as a string
            val far = Instant.parse("+10000-01-01T00:00:00Z")
            val rs = listOf(Reading(Uuid.random(), t2, 2.0), Reading(Uuid.random(), far, 4.0), Reading(Uuid.random(), t3, 3.0), Reading(Uuid.random(), t1, 1.0))
            readings.insertMany(rs)
            readings.find(BsonDocument(), FindOptions(sort = BsonDocument.parse("{at: 1}"))).toList().map { it.value } shouldContainExactly listOf(3.0, 1.0, 2.0, 4.0)
            readings.find(BsonDocument("at", BsonDocument("\$gt", BsonDateTime(t1.toEpochMilliseconds()))), FindOptions(sort = BsonDocument.parse("{at: -1}")))
                .toList().map { it.value } shouldContainExactly listOf(4.0, 2.0)
            readings.countDocuments(BsonDocument("_id", rs[0].id.toJavaUuid().let { org.bson.BsonBinary(it, org.bson.UuidRepresentation.STANDARD) })) shouldBe 1
        } finally {
            cluster.closeSuspending()
            server.shutdownNow()
        }
    }

    test("nullable, list, map, nested, sealed and value-class shapes are native; map keys stay strings; ObjectId and BsonValue still work") {
        WireServerFixture.withServer { f ->
            val shipments = f.db.collection<Shipment>("shipments")
            val tracker = Uuid.random()
            val s = Shipment(
                id = ObjectId(), eta = t1, carrier = Uuid.random(), stops = listOf(t2, t3), maybe = listOf(t1, null),
                byName = mapOf("a" to tracker), byTracker = mapOf(tracker to t2), legs = listOf(Leg(t3, tracker)),
                firstLeg = Leg(t1, tracker), mark = Mark.Seen(t2), deadline = Deadline(t3), extra = BsonDocument("k", BsonString("x")), name = "box",
            )
            val empty = s.copy(id = ObjectId(), eta = null, carrier = null, firstLeg = null, maybe = listOf(null))
            shipments.insertMany(listOf(s, empty))
            shipments.find().toList() shouldContainExactly listOf(s, empty)

            val (raw, rawEmpty) = f.stored("shipments")
            raw.getObjectId("_id").value shouldBe s.id
            raw.getDateTime("eta").value shouldBe t1.toEpochMilliseconds()
            raw.uuidAt("carrier") shouldBe s.carrier!!.toJavaUuid()
            raw.getArray("stops").map { it.asDateTime().value } shouldContainExactly listOf(t2, t3).map { it.toEpochMilliseconds() }
            raw.getArray("maybe").map { it.bsonType } shouldContainExactly listOf(BsonType.DATE_TIME, BsonType.NULL)
            raw.getDocument("byName").uuidAt("a") shouldBe tracker.toJavaUuid()
            raw.getDocument("byTracker").getDateTime(tracker.toString()).value shouldBe t2.toEpochMilliseconds()
            raw.getArray("legs").single().asDocument().let {
                it.getDateTime("from").value shouldBe t3.toEpochMilliseconds()
                it.uuidAt("tracker") shouldBe tracker.toJavaUuid()
            }
            raw.getDocument("firstLeg").getDateTime("from").value shouldBe t1.toEpochMilliseconds()
            raw.getDocument("mark").getDateTime("at").value shouldBe t2.toEpochMilliseconds()
            raw.getDateTime("deadline").value shouldBe t3.toEpochMilliseconds()
            raw.getDocument("extra").getString("k").value shouldBe "x"
            rawEmpty.containsKey("eta") shouldBe false // bson-kotlinx omits nulls (explicitNulls false)
            rawEmpty.containsKey("firstLeg") shouldBe false
        }
    }

    test("@Contextual properties still store the four types natively, next to unannotated ones") {
        WireServerFixture.withServer { f ->
            val mixed = f.db.collection<Mixed>("mixed")
            val m = Mixed(Uuid.random(), t1, java.time.Instant.ofEpochMilli(1_600_000_000_456), UUID.randomUUID(), t2)
            mixed.insertOne(m)
            mixed.find().toList() shouldContainExactly listOf(m)
            val raw = f.stored("mixed").single()
            raw.uuidAt("_id") shouldBe m.id.toJavaUuid()
            raw.getDateTime("at").value shouldBe t1.toEpochMilliseconds()
            raw.getDateTime("javaAt").value shouldBe 1_600_000_000_456
            raw.uuidAt("javaId") shouldBe m.javaId
            raw.getDateTime("plainAt").value shouldBe t2.toEpochMilliseconds()
        }
    }

    test("a user's own serializers apply: @Serializable(with = ...) and a contextual one from a custom module") {
        WireServerFixture.withServer { f ->
            val module = MooringSerializers.module.overwriteWith(SerializersModule { contextual(Instant::class, EpochSecondsSerializer) })
            val custom = f.db.withSerializersModule(module).collection<Custom>("custom")
            val c = Custom(Uuid.random(), Instant.fromEpochSeconds(1_700_000_000), Instant.fromEpochSeconds(1_600_000_000), t1)
            custom.insertOne(c)
            custom.find().toList() shouldContainExactly listOf(c)
            val raw = f.stored("custom").single()
            raw.getInt64("withSerializer").value shouldBe 1_700_000_000
            raw.getInt64("fromModule").value shouldBe 1_600_000_000
            raw.getDateTime("plain").value shouldBe t1.toEpochMilliseconds()
        }
    }

    test("a recursive class round trips with native dates at every level") {
        WireServerFixture.withServer { f ->
            val nodes = f.db.collection<Node>("nodes")
            val n = Node(t1, listOf(Node(t2, listOf(Node(t3))), Node(t3)))
            nodes.insertOne(n)
            nodes.find().toList() shouldContainExactly listOf(n)
            f.stored("nodes").single().getArray("children")[0].asDocument().getArray("children")[0].asDocument().getDateTime("at").value shouldBe t3.toEpochMilliseconds()
        }
    }

    test("a string where a date or UUID is expected is refused, naming the field (ISO text is not parsed)") {
        WireServerFixture.withServer { f ->
            val raw = f.db.collection("readings")
            raw.insertOne(BsonDocument.parse("""{_id: {${'$'}binary: {base64: "AAAAAAAAQACAAAAAAAAAAA==", subType: "04"}}, at: "2023-11-14T22:13:20.123Z", value: 1.0}"""))
            val e = shouldThrow<DocumentDecodingException> { f.db.collection<Reading>("readings").find().toList() }
            e.namespace shouldBe "test.readings"
            e.field shouldBe "at"
            e.message shouldContain "kotlin.time.Instant"
            e.message shouldContain "date"

            f.db.collection("legs").insertOne(BsonDocument.parse("""{from: {${'$'}date: 1}, tracker: "00000000-0000-4000-8000-000000000000"}"""))
            val e2 = shouldThrow<DocumentDecodingException> { f.db.collection<Leg>("legs").find().toList() }
            e2.field shouldBe "tracker"
            e2.message shouldContain "kotlin.uuid.Uuid"

            // the @Contextual serializers refuse text too
            f.db.collection("mixed").insertOne(
                BsonDocument.parse("""{_id: {${'$'}binary: {base64: "AAAAAAAAQACAAAAAAAAAAA==", subType: "04"}}, at: {${'$'}date: 1}, javaAt: "2020-01-01T00:00:00Z", javaId: {${'$'}binary: {base64: "AAAAAAAAQACAAAAAAAAAAA==", subType: "04"}}, plainAt: {${'$'}date: 2}}"""),
            )
            val e3 = shouldThrow<DocumentDecodingException> { f.db.collection<Mixed>("mixed").find().toList() }
            e3.field shouldBe "javaAt"
            e3.message shouldContain "java.time.Instant"
        }
    }
})
