@file:OptIn(ExperimentalTime::class, ExperimentalUuidApi::class)

package dev.mooring.driver

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
import kotlinx.coroutines.flow.toList
import kotlinx.serialization.Contextual
import kotlinx.serialization.SerialName
import kotlinx.serialization.Serializable
import org.bson.BsonBinarySubType
import org.bson.BsonDocument
import org.bson.BsonType
import org.bson.types.ObjectId

@Serializable
data class Event(
    @SerialName("_id") @Contextual val id: ObjectId,
    val name: String,
    @Contextual val at: Instant,
    @Contextual val key: Uuid,
    @Contextual val javaKey: UUID,
    @Contextual val javaAt: java.time.Instant,
    val tags: List<String> = emptyList(),
)

@Serializable
data class Person(val name: String, val age: Int)

class NotSerializable(val x: Int)

/** Typed documents through bson-kotlinx: native BSON types on the wire, clear errors. */
class TypedDocumentsSpec : FunSpec({
    timeout = 120_000

    test("a data class round-trips; Instant and Uuid are stored as BSON date and binary subtype 4") {
        WireServerFixture.withServer { f ->
            val events = f.db.collection<Event>("events")
            val e = Event(
                ObjectId(), "launch", Instant.fromEpochMilliseconds(1_700_000_000_123), Uuid.random(), UUID.randomUUID(),
                java.time.Instant.ofEpochMilli(1_600_000_000_456), listOf("a", "b"),
            )
            events.insertOne(e)
            events.find().toList() shouldContainExactly listOf(e)

            val raw = f.stored("events").single()
            raw["at"]!!.bsonType shouldBe BsonType.DATE_TIME
            raw.getDateTime("at").value shouldBe 1_700_000_000_123
            raw.getDateTime("javaAt").value shouldBe 1_600_000_000_456
            raw.getBinary("key").type shouldBe BsonBinarySubType.UUID_STANDARD.value
            raw.getBinary("key").data.size shouldBe 16
            raw.getBinary("javaKey").type shouldBe BsonBinarySubType.UUID_STANDARD.value
            raw.getBinary("javaKey").asUuid() shouldBe e.javaKey
            raw.getObjectId("_id").value shouldBe e.id
        }
    }

    test("a document without _id gets an ObjectId prepended as its first field, reported in the result") {
        WireServerFixture.withServer { f ->
            val people = f.db.collection<Person>("people")
            val r = people.insertOne(Person("Ada", 36))
            val id = (r as InsertOneResult.Acknowledged).insertedId
            id.isObjectId shouldBe true
            val stored = f.stored("people").single()
            stored.firstKey shouldBe "_id"
            stored["_id"] shouldBe id
            f.started("insert").single().getArray("documents").single().asDocument().firstKey shouldBe "_id"
            people.find().toList() shouldContainExactly listOf(Person("Ada", 36))
        }
    }

    test("a class without a serializer fails at collection<T>() naming the class") {
        WireServerFixture.withServer { f ->
            val e = shouldThrow<IllegalArgumentException> { f.db.collection<NotSerializable>("x") }
            e.message shouldContain "dev.mooring.driver.NotSerializable"
        }
    }

    test("a stored document that does not fit the class fails naming the namespace and the field") {
        WireServerFixture.withServer { f ->
            f.db.collection("people").insertOne(BsonDocument.parse("""{name: "Bob", age: "old"}"""))
            val e = shouldThrow<DocumentDecodingException> { f.db.collection<Person>("people").find().toList() }
            e.namespace shouldBe "test.people"
            e.field shouldBe "age"
            e.message shouldContain "test.people"
            e.message shouldContain "Person"
        }
    }
})
