package dev.mooring.driver.internal

import dev.mooring.driver.Hint
import org.bson.BsonArray
import org.bson.BsonBoolean
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonInt64
import org.bson.BsonValue
import org.bson.conversions.Bson

/** Appending optional fields to a command: a null value appends nothing. */
internal fun BsonDocument.opt(name: String, value: BsonValue?): BsonDocument = apply { if (value != null) put(name, value) }

internal fun BsonDocument.optDoc(name: String, value: Bson?): BsonDocument = opt(name, value?.toDoc())

internal fun BsonDocument.opt(name: String, value: Boolean?): BsonDocument = opt(name, value?.let { BsonBoolean.valueOf(it) })

internal fun BsonDocument.opt(name: String, value: Int?): BsonDocument = opt(name, value?.let { BsonInt32(it) })

internal fun BsonDocument.opt(name: String, value: Long?): BsonDocument = opt(name, value?.let { BsonInt64(it) })

internal fun BsonDocument.opt(name: String, value: Hint?): BsonDocument = opt(name, value?.toBsonValue())

/** The command's `rawData` when set; sdam leaves it out for a server older than MongoDB 8.2 (its one home of that rule). */
internal fun BsonDocument.optRawData(value: dev.mooring.driver.RawData?): BsonDocument = opt("rawData", value?.value)

/** A [Bson] rendered with the default registry ([BsonDocument]s as they are). */
internal fun Bson.toDoc(): BsonDocument = this as? BsonDocument ?: toBsonDocument()

internal fun List<Bson>.toArray(): BsonArray = BsonArray(map { it.toDoc() })
