@file:OptIn(ExperimentalTime::class, kotlin.uuid.ExperimentalUuidApi::class)

package dev.mooring.driver.query

import dev.mooring.driver.MooringSerializers
import dev.mooring.driver.Update
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import kotlin.time.ExperimentalTime
import kotlin.time.Instant
import kotlinx.serialization.KSerializer
import kotlinx.serialization.descriptors.PrimitiveKind
import kotlinx.serialization.descriptors.PrimitiveSerialDescriptor
import kotlinx.serialization.encoding.Decoder
import kotlinx.serialization.encoding.Encoder
import kotlinx.serialization.modules.SerializersModule
import org.bson.BsonDateTime
import org.bson.BsonDocument
import org.bson.BsonString
import org.bson.BsonType
import org.bson.conversions.Bson

private fun Bson.json(): BsonDocument = toBsonDocument()

private infix fun Bson.renders(json: String) {
    toBsonDocument() shouldBe BsonDocument.parse(json)
}

/** The exact BSON of each builder (no server): serial names, nested paths, values in their stored form. */
class QueryBuildersSpec : FunSpec({
    test("comparison filters use the serial names") {
        (Movie::year gt 2000) renders """{y: {${'$'}gt: 2000}}"""
        (Movie::year gte 2000) renders """{y: {${'$'}gte: 2000}}"""
        (Movie::year lt 2000) renders """{y: {${'$'}lt: 2000}}"""
        (Movie::year lte 2000) renders """{y: {${'$'}lte: 2000}}"""
        (Movie::title eq "Alien") renders """{title: "Alien"}"""
        (Movie::title ne "Alien") renders """{title: {${'$'}ne: "Alien"}}"""
        (Movie::year `in` listOf(1979, 1986)) renders """{y: {${'$'}in: [1979, 1986]}}"""
        (Movie::year nin listOf(1979)) renders """{y: {${'$'}nin: [1979]}}"""
        (Movie::rating eq null) renders """{rating: null}"""
        (Movie::rating gt 7.5) renders """{rating: {${'$'}gt: 7.5}}"""
        (Movie::views gt 10L) renders """{views: {${'$'}gt: {${'$'}numberLong: "10"}}}"""
    }

    test("an @SerialName(\"_id\") property is _id; its ObjectId value is a BSON ObjectId") {
        val id = org.bson.types.ObjectId()
        (Movie::id eq id).json() shouldBe BsonDocument("_id", org.bson.BsonObjectId(id))
        path(Movie::id).name shouldBe "_id"
    }

    test("values are encoded as stored: a value class inline, an enum by its serial name, an Instant (contextual) as a BSON date, a data class as a document") {
        (Movie::runtime eq Minutes(120)) renders """{runtime: 120}"""
        (Movie::genre eq Genre.SCIFI) renders """{genre: "sci-fi"}"""
        (Movie::released gte Instant.fromEpochMilliseconds(1_700_000_000_123)).json() shouldBe
            BsonDocument("released", BsonDocument("\$gte", BsonDateTime(1_700_000_000_123)))
        (Movie::director eq Director("Ridley Scott", 1937)) renders """{director: {name: "Ridley Scott", born: 1937}}"""
        (Movie::tags eq listOf("space", "horror")) renders """{tags: ["space", "horror"]}"""
    }

    test("@SerialName on an is-property and on a property inherited from a serializable superclass") {
        (Account::isActive eq false) renders """{active: false}"""
        (Account::version eq 3) renders """{v: 3}"""
        (Account::owner eq "ada") renders """{owner: "ada"}"""
    }

    test("nested paths: property / property, a path / property, and through an array of documents") {
        (Movie::director / Director::birthYear).name shouldBe "director.born"
        (Movie::director / Director::address / Address::city).name shouldBe "director.address.city"
        ((Movie::director / Director::birthYear) lt 1940) renders """{"director.born": {${'$'}lt: 1940}}"""
        ((Movie::cast / Actor::name) eq "Sigourney Weaver") renders """{"cast.name": "Sigourney Weaver"}"""
    }

    test("element, array, regex and evaluation filters") {
        (Movie::rating exists false) renders """{rating: {${'$'}exists: false}}"""
        (Movie::year type BsonType.INT32) renders """{y: {${'$'}type: 16}}"""
        (Movie::tags all listOf("space")) renders """{tags: {${'$'}all: ["space"]}}"""
        (Movie::genres all setOf(Genre.SCIFI)) renders """{genres: {${'$'}all: ["sci-fi"]}}"""
        (Movie::tags size 2) renders """{tags: {${'$'}size: 2}}"""
        (Movie::cast elemMatch ((Actor::name eq "Ian Holm") and (Actor::age gt 40))) renders
            """{cast: {${'$'}elemMatch: {${'$'}and: [{name: "Ian Holm"}, {age: {${'$'}gt: 40}}]}}}"""
        (Movie::title regex "^Al") renders """{title: {${'$'}regularExpression: {pattern: "^Al", options: ""}}}"""
        Movie::title.regex("^al", "i") renders """{title: {${'$'}regularExpression: {pattern: "^al", options: "i"}}}"""
        Movie::year.mod(4, 0) renders """{y: {${'$'}mod: [{${'$'}numberLong: "4"}, {${'$'}numberLong: "0"}]}}"""
    }

    test("logical filters: and, or, nor, not") {
        and(Movie::year gt 2000, Movie::title eq "x") renders """{${'$'}and: [{y: {${'$'}gt: 2000}}, {title: "x"}]}"""
        ((Movie::year gt 2000) or (Movie::title eq "x")) renders """{${'$'}or: [{y: {${'$'}gt: 2000}}, {title: "x"}]}"""
        nor(Movie::year gt 2000) renders """{${'$'}nor: [{y: {${'$'}gt: 2000}}]}"""
        not(Movie::year gt 2000) renders """{y: {${'$'}not: {${'$'}gt: 2000}}}"""
        not(Movie::title eq "x") renders """{title: {${'$'}not: {${'$'}eq: "x"}}}"""
        not(Movie::title regex "^a") renders """{title: {${'$'}not: {${'$'}regularExpression: {pattern: "^a", options: ""}}}}"""
        not(and(Movie::year gt 1, Movie::year lt 3)) renders """{${'$'}nor: [{${'$'}and: [{y: {${'$'}gt: 1}}, {y: {${'$'}lt: 3}}]}]}"""
        shouldThrow<IllegalArgumentException> { or() }
    }

    test("sorts and projections") {
        ascending(Movie::year, Movie::title) renders """{y: 1, title: 1}"""
        descending(Movie::year) renders """{y: -1}"""
        orderBy(descending(Movie::year), ascending(Movie::director / Director::name)) renders """{y: -1, "director.name": 1}"""
        include(Movie::title, Movie::year) renders """{title: 1, y: 1}"""
        exclude(Movie::cast) renders """{cast: 0}"""
        fields(include(Movie::title), excludeId()) renders """{title: 1, _id: 0}"""
    }

    test("update operators combine into one Update.Operators, grouped by operator") {
        val u = update(
            set(Movie::title, "Aliens"),
            set(Movie::runtime, Minutes(137)),
            inc(Movie::views, 1L),
            mul(Movie::rating, 1.1),
            min(Movie::year, 1986),
            max(Movie::released, Instant.fromEpochMilliseconds(5)),
            unset(Movie::director),
            currentDate(Movie::released),
            setOnInsert(Movie::genre, Genre.SCIFI),
            rename(Movie::director / Director::name, "director.fullName"),
        )
        u.shouldBeOperators(
            """{
              ${'$'}set: {title: "Aliens", runtime: 137}, ${'$'}inc: {views: {${'$'}numberLong: "1"}}, ${'$'}mul: {rating: 1.1}, ${'$'}min: {y: 1986},
              ${'$'}max: {released: {${'$'}date: {${'$'}numberLong: "5"}}}, ${'$'}unset: {director: ""}, ${'$'}currentDate: {released: true},
              ${'$'}setOnInsert: {genre: "sci-fi"}, ${'$'}rename: {"director.name": "director.fullName"}
            }""",
        )
        update(currentDate(Movie::released, timestamp = true)).shouldBeOperators("""{${'$'}currentDate: {released: {${'$'}type: "timestamp"}}}""")
    }

    test("array update operators encode each value as an element of the array is stored") {
        update(
            push(Movie::tags, "space"),
            addToSet(Movie::genres, Genre.SCIFI),
            pull(Movie::cast, Actor("Ian Holm", 66)),
            pop(Movie::tags, first = true),
        ).shouldBeOperators(
            """{${'$'}push: {tags: "space"}, ${'$'}addToSet: {genres: "sci-fi"}, ${'$'}pull: {cast: {name: "Ian Holm", age: 66}}, ${'$'}pop: {tags: -1}}""",
        )
        update(pushAll(Movie::tags, listOf("a", "b")), addAllToSet(Movie::genres, listOf(Genre.DRAMA)), pullAll(Movie::tags, listOf("c"))).shouldBeOperators(
            """{${'$'}push: {tags: {${'$'}each: ["a", "b"]}}, ${'$'}addToSet: {genres: {${'$'}each: ["DRAMA"]}}, ${'$'}pullAll: {tags: ["c"]}}""",
        )
        update(pop(Movie::tags)).shouldBeOperators("""{${'$'}pop: {tags: 1}}""")
    }

    test("update refuses no operations and documents that are not operators") {
        shouldThrow<IllegalArgumentException> { update() }
        shouldThrow<IllegalArgumentException> { update(BsonDocument("title", BsonString("x"))).document.toBsonDocument() }
            .message shouldContain "not an update operator"
    }

    test("a value of another type than the field's (Kotlin widens it to Any) fails when rendered, naming the field") {
        shouldThrow<IllegalArgumentException> { (Movie::year eq "x").toBsonDocument() }.message shouldContain "'y'"
        shouldThrow<IllegalArgumentException> { ((Movie::director / Director::name) `in` listOf(1)).toBsonDocument() }.message shouldContain "'director.name'"
        shouldThrow<IllegalArgumentException> { update(push(Movie::tags, 3)).document.toBsonDocument() }.message shouldContain "'tags'"
    }

    test("a @Transient property is refused with a clear error") {
        val e = shouldThrow<IllegalArgumentException> { Movie::cached eq "x" }
        e.message shouldContain "cached"
        e.message shouldContain "@Transient"
    }

    test("encodedWith(module) encodes contextual values with the given module") {
        val asText = object : KSerializer<Instant> {
            override val descriptor = PrimitiveSerialDescriptor("test.InstantAsText", PrimitiveKind.STRING)

            override fun serialize(encoder: Encoder, value: Instant) = encoder.encodeString(value.toString())

            override fun deserialize(decoder: Decoder): Instant = Instant.parse(decoder.decodeString())
        }
        val module = SerializersModule { contextual(Instant::class, asText) }
        val at = Instant.fromEpochMilliseconds(0)
        (Movie::released eq at).encodedWith(module) shouldBe BsonDocument("released", BsonString("1970-01-01T00:00:00Z"))
        (Movie::released eq at).encodedWith(MooringSerializers.module) shouldBe BsonDocument("released", BsonDateTime(0))
        (update(set(Movie::released, at)).encodedWith(module) as Update.Operators).document shouldBe
            BsonDocument("\$set", BsonDocument("released", BsonString("1970-01-01T00:00:00Z")))
    }

    test("unannotated Instant and Uuid values are encoded as stored: a BSON date and binary subtype 4, not strings") {
        @OptIn(kotlin.uuid.ExperimentalUuidApi::class)
        val id = kotlin.uuid.Uuid.parse("00112233-4455-6677-8899-aabbccddeeff")
        (Stamp::at gt Instant.fromEpochMilliseconds(1_700_000_000_123)).json() shouldBe
            BsonDocument("at", BsonDocument("\$gt", BsonDateTime(1_700_000_000_123)))
        (Stamp::id eq id).json() shouldBe
            BsonDocument("id", org.bson.BsonBinary(org.bson.BsonBinarySubType.UUID_STANDARD, id.toByteArray()))
        update(push(Stamp::seen, Instant.fromEpochMilliseconds(7))).shouldBeOperators("""{${'$'}push: {seen: {${'$'}date: {${'$'}numberLong: "7"}}}}""")
    }
})

private fun Update.Operators.shouldBeOperators(json: String) {
    document.toBsonDocument() shouldBe BsonDocument.parse(json)
}
