@file:OptIn(ExperimentalTime::class)

package dev.mooring.driver.query

import kotlin.time.ExperimentalTime
import kotlin.time.Instant
import kotlinx.serialization.Contextual
import kotlinx.serialization.SerialName
import kotlinx.serialization.Serializable
import kotlinx.serialization.Transient
import org.bson.types.ObjectId

@Serializable
@JvmInline
value class Minutes(val value: Int)

@Serializable
enum class Genre { DRAMA, @SerialName("sci-fi") SCIFI }

@Serializable
data class Director(val name: String, @SerialName("born") val birthYear: Int, val address: Address? = null)

@Serializable
data class Address(val city: String)

@Serializable
data class Actor(val name: String, val age: Int)

@Serializable
data class Movie(
    @SerialName("_id") @Contextual val id: ObjectId,
    val title: String,
    @SerialName("y") val year: Int,
    val rating: Double? = null,
    val runtime: Minutes = Minutes(90),
    val genre: Genre = Genre.DRAMA,
    @Contextual val released: Instant = Instant.fromEpochMilliseconds(0),
    val director: Director? = null,
    val tags: List<String> = emptyList(),
    val genres: Set<Genre> = emptySet(),
    val cast: List<Actor> = emptyList(),
    val views: Long = 0,
    @Transient val cached: String = "",
)

@Serializable
open class Entity {
    @SerialName("v")
    var version: Int = 0
}

@Serializable
class Account(@SerialName("active") val isActive: Boolean = true, val owner: String = "") : Entity()

/** Unannotated kotlin.time.Instant and kotlin.uuid.Uuid: stored natively (date, binary 4), so filters must encode them so too. */
@OptIn(kotlin.uuid.ExperimentalUuidApi::class)
@Serializable
data class Stamp(val id: kotlin.uuid.Uuid, val at: Instant, val seen: List<Instant> = emptyList())
