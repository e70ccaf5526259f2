package dev.mooring.testkit.replset

import org.bson.BsonDocument
import org.bson.BsonInt32

/** The strings of the array [key] of a reply. */
internal fun BsonDocument.strings(key: String): List<String> = getArray(key).map { it.asString().value }

/** The reply's topologyVersion. */
internal fun BsonDocument.tv(): TopologyVersion = TopologyVersion.parse(getDocument("topologyVersion"))

/** The reply's error code (0 when it has none). */
internal fun BsonDocument.code(): Int = getNumber("code", BsonInt32(0)).intValue()
