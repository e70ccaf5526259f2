package dev.mooring.driver

import dev.mooring.cmap.MongoCommandException
import dev.mooring.testkit.server.Reply
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.flow.toList
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString
import java.util.Collections

private fun doc(json: String) = BsonDocument.parse(json)

/** Collection and database management: create, listCollections, database aggregate, listDatabases, on the wire. */
class CollectionManagementSpec : FunSpec({
    timeout = 120_000

    test("createCollection sends the typed options as the create command's fields, with the database's write concern") {
        WireServerFixture.withServer(uriOptions = "&w=majority") { f ->
            f.db.createCollection(
                "events",
                CreateCollectionOptions(
                    validator = doc("{x: {\$exists: true}}"),
                    validationLevel = ValidationLevel.MODERATE,
                    validationAction = ValidationAction.WARN,
                    collation = doc("{locale: 'simple'}"), // the test kit's engine takes no other collation
                    timeseries = TimeSeriesOptions("ts", metaField = "m", granularity = TimeSeriesGranularity.MINUTES),
                    expireAfterSeconds = 3600,
                    changeStreamPreAndPostImages = true,
                    comment = BsonString("c"),
                ),
            )
            // the test kit's engine has no capped collections (it refuses the field, 40415): what is sent is the point
            shouldThrow<MongoCommandException> { f.db.createCollection("log", CreateCollectionOptions(capped = true, size = 4096, max = 10)) }.code shouldBe 40415
            f.db.createCollection("clustered", CreateCollectionOptions(clusteredIndex = ClusteredIndexOptions(name = "byId")))
            f.db.createCollection("buckets", CreateCollectionOptions(timeseries = TimeSeriesOptions("t", bucketMaxSpanSeconds = 60, bucketRoundingSeconds = 60)))
            val sent = f.started("create")
            val expected = doc(
                """{create: 'events', validator: {x: {${'$'}exists: true}}, validationLevel: 'moderate', validationAction: 'warn', collation: {locale: 'simple'},
                   timeseries: {timeField: 'ts', metaField: 'm', granularity: 'minutes'}, expireAfterSeconds: {${'$'}numberLong: '3600'},
                   changeStreamPreAndPostImages: {enabled: true}, comment: 'c', writeConcern: {w: 'majority'}}""",
            )
            sent[0].keys.filter { it.startsWith("$") || it == "lsid" }.toSet() + expected.keys shouldBe sent[0].keys // nothing else sent
            for (k in expected.keys) sent[0][k] shouldBe expected[k]
            sent[1].getBoolean("capped").value shouldBe true
            sent[1]["size"] shouldBe org.bson.BsonInt64(4096)
            sent[1]["max"] shouldBe org.bson.BsonInt64(10)
            sent[2].getDocument("clusteredIndex") shouldBe doc("{key: {_id: 1}, unique: true, name: 'byId'}")
            sent[3].getDocument("timeseries") shouldBe doc("{timeField: 't', bucketMaxSpanSeconds: {${'$'}numberLong: '60'}, bucketRoundingSeconds: {${'$'}numberLong: '60'}}")
            f.db.listCollectionNames().sorted() shouldContainExactly listOf("buckets", "clustered", "events")
            shouldThrow<MongoCommandException> { f.db.createCollection("events") }.code shouldBe 48
        }
    }

    test("createCollection with viewOn and pipeline sends a view's create command; a pipeline without viewOn fails at construction") {
        val creates = Collections.synchronizedList(ArrayList<BsonDocument>())
        WireServerFixture.withServer(configure = { server ->
            // the test kit's engine has no views: the command as sent is the point
            server.handler = { ctx, _, cmd -> if (ctx.commandName == "create") { creates += cmd; Reply.Document(doc("{ok: 1}")) } else null }
        }) { f ->
            f.db.createCollection("recent", CreateCollectionOptions(viewOn = "events", pipeline = listOf(doc("{\$match: {x: 1}}"))))
            creates.single().getString("viewOn").value shouldBe "events"
            creates.single().getArray("pipeline") shouldBe doc("{p: [{\$match: {x: 1}}]}").getArray("p")
            shouldThrow<IllegalArgumentException> { CreateCollectionOptions(pipeline = listOf(doc("{\$match: {}}"))) }
            shouldThrow<IllegalArgumentException> { CreateCollectionOptions(viewOn = "") }
        }
    }

    test("encryptedFields is refused before anything is sent; invalid time series options fail at construction") {
        WireServerFixture.withServer { f ->
            val e = shouldThrow<UnsupportedOperationException> { f.db.createCollection("secret", CreateCollectionOptions(encryptedFields = doc("{fields: []}"))) }
            e.message!!.contains("encryptedFields") shouldBe true
            f.started("create") shouldBe emptyList()
            shouldThrow<IllegalArgumentException> { TimeSeriesOptions("t", bucketMaxSpanSeconds = 60) }
            shouldThrow<IllegalArgumentException> { TimeSeriesOptions("t", bucketMaxSpanSeconds = 60, bucketRoundingSeconds = 30) }
            shouldThrow<IllegalArgumentException> { TimeSeriesOptions("t", granularity = TimeSeriesGranularity.HOURS, bucketMaxSpanSeconds = 60, bucketRoundingSeconds = 60) }
            shouldThrow<IllegalArgumentException> { f.db.createCollection("") }
        }
    }

    test("listCollections: filter, nameOnly, authorizedCollections and batch size as sent; the comment only on the command, not the getMores") {
        WireServerFixture.withServer { f ->
            for (c in listOf("a", "b", "c")) f.db.createCollection(c)
            val flow = f.db.listCollections(options = ListCollectionsOptions(nameOnly = true, authorizedCollections = true, batchSize = 1, comment = BsonString("hi")))
            f.started("listCollections") shouldBe emptyList()
            flow.toList().map { it.getString("name").value } shouldContainExactly listOf("a", "b", "c") // (the engine ignores nameOnly)
            val sent = f.started("listCollections").single()
            sent["listCollections"] shouldBe BsonInt32(1)
            sent.containsKey("filter") shouldBe false
            sent["nameOnly"] shouldBe org.bson.BsonBoolean.TRUE
            sent["authorizedCollections"] shouldBe org.bson.BsonBoolean.TRUE
            sent["cursor"] shouldBe doc("{batchSize: 1}")
            sent["comment"] shouldBe BsonString("hi")
            f.started("getMore").isNotEmpty() shouldBe true
            f.started("getMore").any { it.containsKey("comment") } shouldBe false
            f.db.listCollections().toList().first().getDocument("options") shouldBe BsonDocument()
            f.started("listCollections").last().containsKey("filter") shouldBe false
            // a filter is sent as given (the test kit's engine refuses a non-empty one: only what is sent is checked)
            io.kotest.assertions.throwables.shouldThrowAny { f.db.listCollections(doc("{name: {\$in: ['a', 'c']}}")).toList() }
            f.started("listCollections").last()["filter"] shouldBe doc("{name: {\$in: ['a', 'c']}}")
        }
    }

    test("listCollectionNames sends nameOnly unless the filter names a field other than name") {
        WireServerFixture.withServer { f ->
            f.db.createCollection("a")
            f.db.createCollection("b")
            f.db.listCollectionNames() shouldContainExactly listOf("a", "b")
            // the test kit's engine refuses a non-empty listCollections filter: what is sent is the point
            io.kotest.assertions.throwables.shouldThrowAny { f.db.listCollectionNames(doc("{name: 'b'}"), authorizedCollections = true) }
            io.kotest.assertions.throwables.shouldThrowAny { f.db.listCollectionNames(doc("{'options.capped': {\$ne: true}}")) }
            val sent = f.started("listCollections")
            sent.map { it["nameOnly"] } shouldContainExactly listOf(org.bson.BsonBoolean.TRUE, org.bson.BsonBoolean.TRUE, null)
            sent[1]["authorizedCollections"] shouldBe org.bson.BsonBoolean.TRUE
        }
    }

    test("listCollections and listDatabases are retryable reads") {
        WireServerFixture.withServer { f ->
            f.db.createCollection("a")
            f.server.configureFailPoint(doc("""{configureFailPoint: "failCommand", mode: {times: 1}, data: {failCommands: ["listCollections"], closeConnection: true}}"""))
            f.db.listCollectionNames() shouldContainExactly listOf("a")
            f.started("listCollections").size shouldBe 2
            f.server.configureFailPoint(doc("""{configureFailPoint: "failCommand", mode: {times: 1}, data: {failCommands: ["listDatabases"], closeConnection: true}}"""))
            f.cluster.listDatabaseNames() shouldContainExactly listOf("test")
            f.started("listDatabases").size shouldBe 2
        }
    }

    test("listDatabases on admin, typed; listDatabaseNames with nameOnly unless the filter needs more than the name") {
        // a scripted listDatabases reply (as a server sends it; nameOnly leaves the sizes out), whatever the filter:
        // the typed mapping and the command sent are under test, not the filtering
        WireServerFixture.withServer(configure = { server ->
            server.handler = { _, _, cmd ->
                if (cmd.firstKey == "listDatabases") {
                    val nameOnly = cmd.getBoolean("nameOnly", org.bson.BsonBoolean.FALSE).value
                    val dbs = listOf("other", "test").map { if (nameOnly) doc("{name: '$it'}") else doc("{name: '$it', sizeOnDisk: {\$numberLong: '0'}, empty: false}") }
                    Reply.Document(BsonDocument("databases", org.bson.BsonArray(dbs)).append("ok", BsonInt32(1)))
                } else {
                    null
                }
            }
        }) { f ->
            f.cluster.listDatabases() shouldContainExactly listOf(
                DatabaseInfo("other", 0, false, doc("{name: 'other', sizeOnDisk: {\$numberLong: '0'}, empty: false}")),
                DatabaseInfo("test", 0, false, doc("{name: 'test', sizeOnDisk: {\$numberLong: '0'}, empty: false}")),
            )
            f.cluster.listDatabases(nameOnly = true).map { it.sizeOnDisk } shouldContainExactly listOf(null, null)
            f.cluster.listDatabaseNames(doc("{name: 'test'}"), authorizedDatabases = true) shouldContainExactly listOf("other", "test") // scripted
            f.cluster.listDatabaseNames(doc("{empty: false}")) shouldContainExactly listOf("other", "test")
            val sent = f.recorder.ofType<dev.mooring.cmap.CommandStartedEvent>().filter { it.commandName == "listDatabases" }
            sent.all { it.databaseName == "admin" } shouldBe true
            sent.map { it.command["nameOnly"] } shouldContainExactly listOf(null, org.bson.BsonBoolean.TRUE, org.bson.BsonBoolean.TRUE, null)
            sent[2].command["filter"] shouldBe doc("{name: 'test'}")
            sent[2].command["authorizedDatabases"] shouldBe org.bson.BsonBoolean.TRUE
        }
    }

    test("database aggregate: aggregate 1 with the database's read concern; a write stage with the write concern") {
        WireServerFixture.withServer(uriOptions = "&w=majority", configure = { server ->
            server.handler = { _, db, cmd ->
                if (cmd["aggregate"] == BsonInt32(1)) {
                    Reply.Document(doc("{cursor: {id: 0, ns: '$db.\$cmd.aggregate', firstBatch: [{op: 1}, {op: 2}]}, ok: 1}"))
                } else {
                    null
                }
            }
        }) { f ->
            val db = f.db.withReadConcern(ReadConcern.LOCAL)
            db.aggregate(listOf(doc("{\$currentOp: {}}")), AggregateOptions(batchSize = 10, comment = BsonString("c"))).toList() shouldContainExactly
                listOf(doc("{op: 1}"), doc("{op: 2}"))
            db.aggregate(listOf(doc("{\$documents: [{a: 1}]}"), doc("{\$out: 'copy'}"))).toList()
            val sent = f.started("aggregate")
            sent[0]["aggregate"] shouldBe BsonInt32(1)
            sent[0].keys.first() shouldBe "aggregate"
            sent[0].getArray("pipeline").single() shouldBe doc("{\$currentOp: {}}")
            sent[0]["cursor"] shouldBe doc("{batchSize: 10}")
            sent[0]["readConcern"] shouldBe doc("{level: 'local'}")
            sent[0].containsKey("writeConcern") shouldBe false
            sent[1]["writeConcern"] shouldBe doc("{w: 'majority'}")
        }
    }
})
