package dev.mooring.sdam.internal.tracing

import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonInt64

/** Command span attributes read from command documents (open-telemetry.md "Command Span Attributes"). */
class CommandAttributesSpec : FunSpec({
    val find = BsonDocument.parse("{find: 'items', filter: {_id: 1}, lsid: {id: 1}, \$db: 'db', \$clusterTime: {clusterTime: 1}}")

    test("db.query.text: relaxed extended JSON without lsid, \$db and \$clusterTime; whole when it fits") {
        val whole = """{"find": "items", "filter": {"_id": 1}}"""
        CommandAttributes.queryText(find, whole.length) shouldBe whole
        CommandAttributes.queryText(find, Int.MAX_VALUE) shouldBe whole
    }

    test("db.query.text: truncated as logging.md truncates, to the length plus a trailing ellipsis that does not count") {
        CommandAttributes.queryText(find, 20) shouldBe """{"find": "items", "f..."""
    }

    test("db.collection.name: the getMore's collection field; none for admin or a non-string first value") {
        CommandAttributes.collection("db", BsonDocument("getMore", BsonInt64(5)).append("collection", org.bson.BsonString("items"))) shouldBe "items"
        CommandAttributes.collection("db", find) shouldBe "items"
        CommandAttributes.collection("admin", find) shouldBe null
        CommandAttributes.collection("db", BsonDocument.parse("{listCollections: 1}")) shouldBe null
        CommandAttributes.collection("db", BsonDocument.parse("{killCursors: 'items', cursors: [5]}")) shouldBe "items"
    }

    test("db.collection.name: none for user and role management commands, whose first value names a user or role") {
        for (name in listOf("dropUser", "usersInfo", "grantRolesToUser", "createRole", "rolesInfo", "dropRole")) {
            CommandAttributes.collection("db", BsonDocument.parse("{$name: 'alice'}")) shouldBe null
        }
    }

    test("db.mongodb.cursor_id: the getMore's and killCursors' cursor") {
        CommandAttributes.cursorId(BsonDocument("getMore", BsonInt64(5))) shouldBe 5L
        CommandAttributes.cursorId(BsonDocument("killCursors", org.bson.BsonString("items")).append("cursors", BsonArray(listOf(BsonInt64(7))))) shouldBe 7L
        CommandAttributes.cursorId(find) shouldBe null
    }
})
