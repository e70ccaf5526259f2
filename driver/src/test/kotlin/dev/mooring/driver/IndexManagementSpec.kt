package dev.mooring.driver

import dev.mooring.cmap.MongoCommandException
import dev.mooring.testkit.server.Reply
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.flow.toList
import org.bson.BsonDocument
import org.bson.BsonDouble
import org.bson.BsonInt32
import org.bson.BsonString
import java.util.Collections

private fun doc(json: String) = BsonDocument.parse(json)

/** Index management (index-management.md) observed on the wire: commands as sent, names, write concern, errors. */
class IndexManagementSpec : FunSpec({
    timeout = 120_000

    test("createIndex(es): names generated as field_direction pairs, options as spec fields, the collection's write concern; listIndexNames sees them") {
        WireServerFixture.withServer(uriOptions = "&w=majority") { f ->
            val items = f.db.collection("items")
            items.createIndex(doc("{name: 1, dob: -1}"), IndexOptions(unique = true, expireAfterSeconds = 60)) shouldBe "name_1_dob_-1"
            val names = items.createIndexes(
                listOf(
                    IndexModel(doc("{loc: '2dsphere'}")),
                    IndexModel(BsonDocument("a", BsonDouble(1.0)).append("b", BsonInt32(-1))),
                    IndexModel(doc("{c: 1}"), IndexOptions(name = "by_c", partialFilterExpression = doc("{c: {\$gt: 0}}"), defaultLanguage = "none")),
                ),
                CreateIndexOptions(maxTimeMS = 1000, comment = BsonString("why")),
            )
            names shouldContainExactly listOf("loc_2dsphere", "a_1_b_-1", "by_c")
            val sent = f.started("createIndexes")
            sent[0]["indexes"] shouldBe doc("{a: [{key: {name: 1, dob: -1}, name: 'name_1_dob_-1', unique: true, expireAfterSeconds: {\$numberLong: '60'}}]}")["a"]
            sent[0].getDocument("writeConcern") shouldBe doc("{w: 'majority'}")
            sent[0].containsKey("commitQuorum") shouldBe false
            sent[1].getArray("indexes")[2] shouldBe doc("{key: {c: 1}, name: 'by_c', partialFilterExpression: {c: {\$gt: 0}}, default_language: 'none'}")
            sent[1]["maxTimeMS"] shouldBe org.bson.BsonInt64(1000)
            sent[1]["comment"] shouldBe BsonString("why")
            items.listIndexNames() shouldContainExactly listOf("_id_", "name_1_dob_-1", "loc_2dsphere", "a_1_b_-1", "by_c")
            items.listIndexes().toList().first() shouldBe doc("{v: 2, key: {_id: 1}, name: '_id_'}")
        }
    }

    test("timeoutMS bounds the index commands (maxTimeMS sent, no wtimeout); without it wtimeout is sent") {
        WireServerFixture.withServer(uriOptions = "&w=majority&wTimeoutMS=2000") { f ->
            val items = f.db.collection("items")
            items.createIndex(doc("{a: 1}"))
            val timed = items.withTimeout(60_000)
            timed.createIndex(doc("{b: 1}"), options = CreateIndexOptions(commitQuorum = CommitQuorum.MAJORITY))
            timed.listIndexNames() shouldContainExactly listOf("_id_", "a_1", "b_1")
            timed.dropIndex("b_1")
            val created = f.started("createIndexes")
            created[0].getDocument("writeConcern") shouldBe doc("{w: 'majority', wtimeout: {\$numberLong: '2000'}}")
            created[0].containsKey("maxTimeMS") shouldBe false
            created[1].getDocument("writeConcern") shouldBe doc("{w: 'majority'}")
            (created[1].getNumber("maxTimeMS").longValue() in 1..60_000) shouldBe true
            (f.started("listIndexes").single().getNumber("maxTimeMS").longValue() in 1..60_000) shouldBe true
            (f.started("dropIndexes").single().getNumber("maxTimeMS").longValue() in 1..60_000) shouldBe true
            // timeoutMS 0 (no limit, but set) overrides the deprecated maxTimeMS option: not sent
            items.withTimeout(0).createIndex(doc("{c: 1}"), options = CreateIndexOptions(maxTimeMS = 1234))
            items.withTimeout(0).dropIndex("c_1", DropIndexOptions(maxTimeMS = 1234))
            f.started("createIndexes").last().containsKey("maxTimeMS") shouldBe false
            f.started("dropIndexes").last().containsKey("maxTimeMS") shouldBe false
        }
    }

    test("an index model with empty keys, and an empty model list, fail before anything is sent") {
        WireServerFixture.withServer { f ->
            val items = f.db.collection("items")
            shouldThrow<IllegalArgumentException> { items.createIndex(BsonDocument()) }
            shouldThrow<IllegalArgumentException> { IndexModel(BsonDocument()) }
            shouldThrow<IllegalArgumentException> { items.createIndexes(emptyList()) }
            f.started("createIndexes") shouldBe emptyList()
        }
    }

    test("commitQuorum is sent to a 4.4+ primary and refused before sending to an older one") {
        WireServerFixture.withServer { f ->
            f.db.collection("items").createIndex(doc("{a: 1}"), options = CreateIndexOptions(commitQuorum = CommitQuorum.MAJORITY))
            f.db.collection("items").createIndex(doc("{b: 1}"), options = CreateIndexOptions(commitQuorum = CommitQuorum.Members(2)))
            f.started("createIndexes").map { it["commitQuorum"] } shouldContainExactly listOf(BsonString("majority"), BsonInt32(2))
        }
        WireServerFixture.withServer(configure = { it.maxWireVersion = 8 }) { f ->
            val e = shouldThrow<IllegalArgumentException> {
                f.db.collection("items").createIndex(doc("{a: 1}"), options = CreateIndexOptions(commitQuorum = CommitQuorum.VOTING_MEMBERS))
            }
            e.message!!.contains("4.4") shouldBe true
            f.started("createIndexes") shouldBe emptyList()
            f.db.collection("items").createIndex(doc("{a: 1}")) shouldBe "a_1" // without commitQuorum the old server is fine
        }
    }

    test("dropIndex by name and by keys, dropIndexes with '*'; '*' by name refused; a missing index fails, a missing collection does not") {
        WireServerFixture.withServer(uriOptions = "&w=1") { f ->
            val items = f.db.collection("items")
            items.createIndexes(listOf(IndexModel(doc("{a: 1}")), IndexModel(doc("{b: 1}")), IndexModel(doc("{c: 1}"))))
            items.dropIndex("a_1", DropIndexOptions(comment = BsonString("x")))
            items.dropIndex(doc("{b: 1}"))
            items.listIndexNames() shouldContainExactly listOf("_id_", "c_1")
            shouldThrow<IllegalArgumentException> { items.dropIndex("*") }
            shouldThrow<MongoCommandException> { items.dropIndex("nope") }.code shouldBe 27
            items.dropIndexes()
            items.listIndexNames() shouldContainExactly listOf("_id_")
            val sent = f.started("dropIndexes")
            sent.map { it["index"] } shouldContainExactly listOf(BsonString("a_1"), doc("{b: 1}"), BsonString("nope"), BsonString("*"))
            sent[0]["comment"] shouldBe BsonString("x")
            sent.all { it.getDocument("writeConcern") == doc("{w: 1}") } shouldBe true
            val missing = f.db.collection("never")
            missing.dropIndexes()
            missing.dropIndex("a_1")
            missing.listIndexes().toList() shouldBe emptyList()
            missing.listIndexNames() shouldBe emptyList()
        }
    }

    test("listIndexes: a cold cursor with the batch size and the comment on the command and every getMore") {
        WireServerFixture.withServer { f ->
            val items = f.db.collection("items")
            items.createIndexes(listOf(IndexModel(doc("{a: 1}")), IndexModel(doc("{b: 1}"))))
            val flow = items.listIndexes(ListIndexesOptions(batchSize = 1, comment = BsonString("c")))
            f.started("listIndexes") shouldBe emptyList()
            flow.toList().map { it.getString("name").value } shouldContainExactly listOf("_id_", "a_1", "b_1")
            val sent = f.started("listIndexes").single()
            sent.getString("listIndexes").value shouldBe "items"
            sent["cursor"] shouldBe doc("{batchSize: 1}")
            sent["comment"] shouldBe BsonString("c")
            sent.containsKey("readConcern") shouldBe false
            f.started("getMore").size shouldBe 2
            f.started("getMore").all { it["comment"] == BsonString("c") && it["batchSize"] == BsonInt32(1) } shouldBe true
            flow.toList().size shouldBe 3 // each collection runs the command anew
            f.started("listIndexes").size shouldBe 2
        }
    }

    test("listIndexes is a retryable read; createIndexes is sent once") {
        WireServerFixture.withServer { f ->
            val items = f.db.collection("items")
            items.createIndex(doc("{a: 1}"))
            f.server.configureFailPoint(doc("""{configureFailPoint: "failCommand", mode: {times: 1}, data: {failCommands: ["listIndexes"], closeConnection: true}}"""))
            items.listIndexNames() shouldContainExactly listOf("_id_", "a_1")
            f.started("listIndexes").size shouldBe 2
            f.server.configureFailPoint(doc("""{configureFailPoint: "failCommand", mode: {times: 1}, data: {failCommands: ["createIndexes"], errorCode: 189}}"""))
            shouldThrow<MongoCommandException> { items.createIndex(doc("{b: 1}")) }.code shouldBe 189
            f.started("createIndexes").size shouldBe 2 // one per call
        }
    }

    test("a writeConcernError on createIndexes and dropIndexes is a MongoWriteConcernException") {
        WireServerFixture.withServer(uriOptions = "&w=majority") { f ->
            val items = f.db.collection("items")
            fun failNext(command: String) = f.server.configureFailPoint(
                doc("""{configureFailPoint: "failCommand", mode: {times: 1}, data: {failCommands: ["$command"], writeConcernError: {code: 64, codeName: "WriteConcernFailed", errmsg: "timed out"}}}"""),
            )
            failNext("createIndexes")
            val e = shouldThrow<MongoWriteConcernException> { items.createIndex(doc("{a: 1}")) }
            e.code shouldBe 64
            e.result shouldBe null
            e.namespace shouldBe "test.items"
            failNext("dropIndexes")
            shouldThrow<MongoWriteConcernException> { items.dropIndexes() }.code shouldBe 64
        }
    }

    test("search index helpers: commands without read or write concern, names from the reply, NamespaceNotFound on drop suppressed") {
        val seen = Collections.synchronizedList(ArrayList<BsonDocument>())
        WireServerFixture.withServer(uriOptions = "&w=majority", configure = { server ->
            server.handler = { ctx, _, cmd ->
                when (ctx.commandName) {
                    "createSearchIndexes" -> {
                        seen += cmd
                        val created = cmd.getArray("indexes").map { BsonDocument("id", BsonString("x")).append("name", it.asDocument()["name"] ?: BsonString("default")) }
                        Reply.Document(BsonDocument("indexesCreated", org.bson.BsonArray(created)).append("ok", BsonInt32(1)))
                    }
                    "updateSearchIndex" -> { seen += cmd; Reply.Document(doc("{ok: 1}")) }
                    "dropSearchIndex" -> { seen += cmd; Reply.Document(doc("{ok: 0, code: 26, codeName: 'NamespaceNotFound', errmsg: 'ns not found'}")) }
                    else -> null
                }
            }
        }) { f ->
            val items = f.db.withReadConcern(ReadConcern.MAJORITY).collection("items")
            items.createSearchIndex(SearchIndexModel(doc("{mappings: {dynamic: true}}"), name = "s1")) shouldBe "s1"
            items.createSearchIndexes(listOf(SearchIndexModel(doc("{fields: []}"), type = "vectorSearch"), SearchIndexModel(doc("{}"), name = "s3"))) shouldContainExactly
                listOf("default", "s3")
            items.updateSearchIndex("s1", doc("{mappings: {dynamic: false}}"))
            items.dropSearchIndex("s1")
            // no models: sent as given, the server answers (index-management's "empty index definition array")
            items.createSearchIndexes(emptyList()) shouldBe emptyList()
            seen.map { it.keys.first() } shouldContainExactly listOf("createSearchIndexes", "createSearchIndexes", "updateSearchIndex", "dropSearchIndex", "createSearchIndexes")
            seen[4].getArray("indexes") shouldBe org.bson.BsonArray()
            seen.none { it.containsKey("writeConcern") || it.containsKey("readConcern") } shouldBe true
            seen[0].getArray("indexes").single() shouldBe doc("{definition: {mappings: {dynamic: true}}, name: 's1'}")
            seen[1].getArray("indexes")[0] shouldBe doc("{definition: {fields: []}, type: 'vectorSearch'}")
            seen[2].getString("name").value shouldBe "s1"
            seen[2].getDocument("definition") shouldBe doc("{mappings: {dynamic: false}}")
        }
    }

    test("listSearchIndexes: an aggregate of \$listSearchIndexes with the aggregate options and no read concern") {
        WireServerFixture.withServer(configure = { server ->
            server.handler = { _, db, cmd ->
                if (cmd.getArray("pipeline", null)?.firstOrNull()?.asDocument()?.containsKey("\$listSearchIndexes") == true) {
                    Reply.Document(doc("{cursor: {id: 0, ns: '$db.items', firstBatch: [{name: 's1', status: 'READY'}]}, ok: 1}"))
                } else {
                    null
                }
            }
        }) { f ->
            val items = f.db.withReadConcern(ReadConcern.MAJORITY).collection("items")
            items.listSearchIndexes("s1", AggregateOptions(batchSize = 5, comment = BsonString("c"))).toList() shouldBe listOf(doc("{name: 's1', status: 'READY'}"))
            items.listSearchIndexes().toList().size shouldBe 1
            val sent = f.started("aggregate")
            sent[0].getArray("pipeline").single() shouldBe doc("{\$listSearchIndexes: {name: 's1'}}")
            sent[0].getDocument("cursor") shouldBe doc("{batchSize: 5}")
            sent[0]["comment"] shouldBe BsonString("c")
            sent[1].getArray("pipeline").single() shouldBe doc("{\$listSearchIndexes: {}}")
            sent.none { it.containsKey("readConcern") } shouldBe true
        }
    }

    test("renameCollection runs on admin with full namespaces, dropTarget and the write concern, and returns the renamed collection") {
        val renames = Collections.synchronizedList(ArrayList<Pair<String, BsonDocument>>())
        WireServerFixture.withServer(uriOptions = "&w=majority", configure = { server ->
            server.handler = { ctx, db, cmd ->
                if (ctx.commandName == "renameCollection") {
                    renames += db to cmd
                    Reply.Document(doc("{ok: 1}"))
                } else {
                    null
                }
            }
        }) { f ->
            val renamed = f.db.collection("items").renameCollection("things")
            renamed.namespace shouldBe "test.things"
            f.db.collection("items").renameCollection("old", dropTarget = true, newDatabaseName = "archive").namespace shouldBe "archive.old"
            renames.map { it.first } shouldContainExactly listOf("admin", "admin")
            renames[0].second.let { c ->
                c.getString("renameCollection").value shouldBe "test.items"
                c.getString("to").value shouldBe "test.things"
                c.containsKey("dropTarget") shouldBe false
                c.getDocument("writeConcern") shouldBe doc("{w: 'majority'}")
            }
            renames[1].second.getString("to").value shouldBe "archive.old"
            renames[1].second["dropTarget"] shouldBe org.bson.BsonBoolean.TRUE
            shouldThrow<IllegalArgumentException> { f.db.collection("items").renameCollection("x", newDatabaseName = "a.b") }
        }
    }
})
