package dev.mooring.spec.unified

import dev.mooring.cmap.ServerApi
import dev.mooring.events.EventListener
import dev.mooring.events.MooringEvent
import dev.mooring.events.MooringException
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.sdam.MongoOperationTimeoutException
import dev.mooring.sdam.TracingSettings
import dev.mooring.sdam.ReadPreference
import dev.mooring.sdam.ReadPreferenceMode
import dev.mooring.sdam.TopologyDescription
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Deferred
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.async
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeout
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.boolean
import kotlinx.serialization.json.booleanOrNull
import kotlinx.serialization.json.contentOrNull
import kotlinx.serialization.json.int
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import kotlinx.serialization.json.long
import org.bson.BsonArray
import org.bson.BsonBoolean
import org.bson.BsonDocument
import org.bson.BsonObjectId
import org.bson.BsonInt32
import org.bson.BsonString
import org.bson.BsonValue
import java.util.Collections
import kotlin.time.Duration.Companion.seconds

/**
 * Runs one unified-format test against a [UnifiedHost] with [MongoCluster] clients: the
 * subset of the unified test format the SDAM tests use ([SUPPORTED_OPERATIONS]). Anything
 * else fails loudly with [UnsupportedOperationException] (the spec decides to skip beforehand).
 */
class UnifiedTestRun(private val host: UnifiedHost, private val file: JsonObject) {
    private class Client(val cluster: MongoCluster, val events: MutableList<MooringEvent>, val options: EntityOptions) {
        fun snapshot(): List<MooringEvent> = synchronized(events) { events.toList() }
    }

    private class Database(val client: String, val name: String, val options: EntityOptions)
    private class Collection(val database: String, val name: String, val options: EntityOptions)

    private val crud = CrudOperations()
    private val sessionOps = SessionOperations()
    private lateinit var cursorOps: CursorOperations

    private val clients = LinkedHashMap<String, Client>()
    private val databases = HashMap<String, Database>()
    private val collections = HashMap<String, Collection>()
    private val threads = HashMap<String, MutableList<Deferred<Unit>>>()
    private val recorded = HashMap<String, TopologyDescription>()
    private val logCaptures = HashMap<String, LogCapture>()
    private val failPoints = Collections.synchronizedSet(LinkedHashSet<String>())

    suspend fun run(test: JsonObject) {
        try {
            host.beforeTest()
            coroutineScope {
                cursorOps = CursorOperations(this)
                UnifiedTracing.reset()
                file["createEntities"]?.let { createEntities(it.jsonArray) }
                file["initialData"]?.jsonArray?.forEach { initialData(it.jsonObject) }
                test["operations"]!!.jsonArray.forEach { operation(this, it.jsonObject) }
                threads.values.flatten().forEach { it.await() }
                test["expectEvents"]?.jsonArray?.forEach { expectEvents(it.jsonObject) }
                test["expectLogMessages"]?.jsonArray?.forEach { e ->
                    val id = e.jsonObject["client"]!!.jsonPrimitive.content
                    val capture = logCaptures[id] ?: error("expectLogMessages for client $id, which has no observeLogMessages")
                    LogCapture.expect(e.jsonObject, capture.snapshot())
                }
                test["expectTracingMessages"]?.jsonArray?.forEach { UnifiedTracing.expect(it.jsonObject) }
                test["outcome"]?.jsonArray?.forEach { outcome(it.jsonObject) }
                cursorOps.closeAll()
            }
        } finally {
            // a timed-out test's fail points are turned off too: the deployment may outlive the test
            withContext(NonCancellable) { host.disableFailPoints(failPoints.toSet()) }
            sessionOps.endAll()
            clients.values.forEach { it.cluster.closeSuspending() }
        }
    }

    private suspend fun createEntities(entities: JsonArray) {
        for (e in entities) {
            val (kind, spec) = e.jsonObject.entries.single()
            val o = spec.jsonObject
            val id = o["id"]!!.jsonPrimitive.content
            // a field this runner does not act on would be silently dropped: the test fails instead
            ENTITY_FIELDS[kind]?.let { known -> (o.keys - known).firstOrNull()?.let { throw UnsupportedOperationException("$kind entity field $it") } }
            when (kind) {
                "client" -> {
                    val uriOptions = o["uriOptions"]?.jsonObject?.mapValues { (k, v) ->
                        if (v is JsonObject && v.containsKey("\$\$placeholder")) host.placeholder(k) else v.jsonPrimitive.content
                    } ?: emptyMap()
                    // write and read concerns are the CRUD helpers' business (Mooring sends commands as given)
                    val options = uriOptions - setOf("w", "readConcernLevel")
                    val clientOptions = EntityOptions(
                        readConcern = uriOptions["readConcernLevel"]?.let { BsonDocument("level", BsonString(it)) },
                        writeConcern = uriOptions["w"]?.let { w -> BsonDocument("w", w.toIntOrNull()?.let { BsonInt32(it) } ?: BsonString(w)) },
                    )
                    val observed = o["observeEvents"]?.jsonArray?.map { it.jsonPrimitive.content } ?: emptyList()
                    val types = observed.map { EventMatching.all[it] ?: throw UnsupportedOperationException("observeEvents $it") }
                    val filter = CommandEventFilter(
                        o["ignoreCommandMonitoringEvents"]?.jsonArray?.map { it.jsonPrimitive.content } ?: emptyList(),
                        (o["observeSensitiveCommands"] as? JsonPrimitive)?.booleanOrNull ?: false,
                    )
                    val events = Collections.synchronizedList(ArrayList<MooringEvent>())
                    val listener = EventListener { ev -> if (types.any { it.isInstance(ev) } && filter.records(ev)) events.add(ev) }
                    val multi = (o["useMultipleMongoses"] as? JsonPrimitive)?.booleanOrNull ?: false
                    var settings = MongoClusterSettings.fromUri(host.uri(options, multi))
                    o["observeLogMessages"]?.let { observe ->
                        val capture = LogCapture(observe.jsonObject).also { logCaptures[id] = it }
                        settings = settings.copy(logging = capture.settings)
                    }
                    o["serverApi"]?.jsonObject?.let { api ->
                        fun flag(name: String) = (api[name] as? JsonPrimitive)?.booleanOrNull
                        val declared = ServerApi(api["version"]!!.jsonPrimitive.content, flag("strict"), flag("deprecationErrors"))
                        settings = settings.copy(connection = settings.connection.copy(serverApi = declared))
                    }
                    o["observeTracingMessages"]?.let { observe ->
                        val payload = (observe.jsonObject["enableCommandPayload"] as? JsonPrimitive)?.booleanOrNull ?: false
                        settings = settings.copy(tracing = TracingSettings(enabled = true, queryTextMaxLength = if (payload) Int.MAX_VALUE else 0))
                    }
                    clients[id] = Client(MongoCluster(settings, listOf(listener)), events, clientOptions)
                    o["awaitMinPoolSizeMS"]?.let { awaitMinPoolSize(clients.getValue(id).cluster, uriOptions["minPoolSize"]?.toInt() ?: 0, it.jsonPrimitive.long) }
                }
                "database" -> databases[id] = Database(
                    o["client"]!!.jsonPrimitive.content,
                    o["databaseName"]!!.jsonPrimitive.content,
                    entityOptions(o["databaseOptions"]?.jsonObject),
                )
                "collection" -> collections[id] = Collection(
                    o["database"]!!.jsonPrimitive.content,
                    o["collectionName"]!!.jsonPrimitive.content,
                    entityOptions(o["collectionOptions"]?.jsonObject),
                )
                "thread" -> threads[id] = ArrayList()
                "session" -> sessionOps.create(id, clients.getValue(o["client"]!!.jsonPrimitive.content).cluster, o)
                else -> throw UnsupportedOperationException("entity $kind")
            }
        }
    }

    /**
     * `awaitMinPoolSizeMS`: waits until the pool of every data-bearing server of [cluster]'s
     * topology (at least one) holds [minPoolSize] connections; the test fails when [ms] pass first.
     */
    private suspend fun awaitMinPoolSize(cluster: MongoCluster, minPoolSize: Int, ms: Long) {
        if (minPoolSize <= 0) return
        withTimeout(ms) {
            while (true) {
                val servers = cluster.topology.value.servers.values.filter { it.isDataBearing }.map { it.address }
                val pools = cluster.poolStatistics()
                if (servers.isNotEmpty() && servers.all { (pools[it]?.totalConnections ?: 0) >= minPoolSize }) break
                delay(10)
            }
        }
    }

    /**
     * initialData goes through an internal cluster with a "majority" write concern, as the format
     * requires: no client entity observes it. Dropping a collection that does not exist is no
     * error (NamespaceNotFound, from servers before MongoDB 7.0).
     */
    private suspend fun initialData(d: JsonObject) {
        val db = d["databaseName"]!!.jsonPrimitive.content
        val coll = d["collectionName"]!!.jsonPrimitive.content
        val setup = MongoCluster(MongoClusterSettings.fromUri(host.uri(emptyMap())))
        try {
            val majority = BsonDocument("w", BsonString("majority"))
            try {
                setup.runCommand(db, BsonDocument("drop", BsonString(coll)).append("writeConcern", majority))
            } catch (e: dev.mooring.cmap.MongoCommandException) {
                if (e.code != 26) throw e
            }
            val docs = d["documents"]!!.jsonArray.map { bson(it.jsonObject) }
            if (docs.isNotEmpty()) {
                setup.runCommand(db, BsonDocument("insert", BsonString(coll)).append("documents", BsonArray(docs)).append("writeConcern", majority))
            } else {
                setup.runCommand(db, BsonDocument("create", BsonString(coll)).append("writeConcern", majority))
            }
        } finally {
            setup.closeSuspending()
        }
    }

    private suspend fun operation(scope: CoroutineScope, op: JsonObject) {
        val name = op["name"]!!.jsonPrimitive.content
        val target = op["object"]!!.jsonPrimitive.content
        val args = op["arguments"]?.jsonObject ?: JsonObject(emptyMap())
        val expectError = op["expectError"]?.jsonObject
        val result = runCatching { execute(scope, name, target, args, op["saveResultAsEntity"]?.jsonPrimitive?.content) }
        val error = result.exceptionOrNull()?.let { CrudOperations.unwrap(it) }
        if (expectError == null) {
            if (error != null) throw AssertionError("operation $name on $target failed: $error", error)
            op["expectResult"]?.let { expected ->
                val actual = result.getOrNull() ?: throw UnsupportedOperationException("expectResult of $name")
                check(ValueMatching.matchesResult(name, BsonDocument.parse("{\"v\": $expected}")["v"]!!, actual)) { "operation $name: expected result $expected, got $actual" }
            }
            return
        }
        checkNotNull(error) { "operation $name on $target was expected to fail ($expectError) but succeeded" }
        if (error is UnsupportedOperationException || error is AssertionError) throw error
        for ((k, v) in expectError) {
            when (k) {
                "isError" -> Unit
                "isClientError" -> ErrorOrigin.isClientError(error) shouldBe v.jsonPrimitive.booleanOrNull
                "errorCode" -> serverCode(error) shouldBe v.jsonPrimitive.int
                "errorContains" -> check(error.message.orEmpty().contains(v.jsonPrimitive.content, ignoreCase = true)) { "error $error does not contain $v" }
                "errorLabelsContain" -> v.jsonArray.forEach { l ->
                    check(CrudOperations.hasErrorLabel(error, l.jsonPrimitive.content)) { "error $error lacks label $l (has ${(error as? MooringException)?.errorLabels})" }
                }
                "errorLabelsOmit" -> v.jsonArray.forEach { l ->
                    check(!CrudOperations.hasErrorLabel(error, l.jsonPrimitive.content)) { "error $error has label $l" }
                }
                "errorCode" -> check(CrudOperations.errorCode(error) == v.jsonPrimitive.int) { "error $error: expected code $v" }
                "errorCodeName" -> check(CrudOperations.errorCodeName(error) == v.jsonPrimitive.content) { "error $error: expected code name $v" }
                "writeErrors" -> {
                    val found = (error as? ClientBulkWriteException)?.writeErrors ?: throw AssertionError("error $error has no writeErrors")
                    check(ValueMatching.matches(BsonDocument.parse("{\"v\": $v}")["v"]!!, found)) { "operation $name: expected writeErrors $v, got $found" }
                }
                "writeConcernErrors" -> {
                    val found = (error as? ClientBulkWriteException)?.writeConcernErrors ?: throw AssertionError("error $error has no writeConcernErrors")
                    check(ValueMatching.matches(BsonDocument.parse("{\"v\": $v}")["v"]!!, found)) { "operation $name: expected writeConcernErrors $v, got $found" }
                }
                "expectResult" -> {
                    val thrown = result.exceptionOrNull()
                    val partial = (thrown as? BulkWriteException)?.partialResult ?: (thrown as? ClientBulkWriteException)?.partialResult
                        ?: throw UnsupportedOperationException("expectError.expectResult of $name")
                    check(ValueMatching.matches(BsonDocument.parse("{\"v\": $v}")["v"]!!, partial)) { "operation $name: expected partial result $v, got $partial" }
                }
                "isTimeoutError" -> (error is MongoOperationTimeoutException) shouldBe v.jsonPrimitive.boolean
                else -> throw UnsupportedOperationException("expectError.$k")
            }
        }
    }

    /** The server's error code behind [error]: a command error's code, or the code an authentication failure carries. */
    private fun serverCode(error: Throwable): Int? = generateSequence(error) { it.cause }.firstNotNullOfOrNull {
        when (it) {
            is dev.mooring.cmap.MongoCommandException -> it.code
            is dev.mooring.cmap.MongoAuthenticationException -> it.serverCode
            else -> null
        }
    }

    /** Runs one operation; returns its result for the CRUD operations and runCommand, null for the others. */
    private suspend fun execute(scope: CoroutineScope, name: String, target: String, args: JsonObject, saveAs: String?): BsonValue? {
        when (name) {
            "createEntities" -> createEntities(args["entities"]!!.jsonArray)
            // as the format requires, through the named client (its checkout is observed; configureFailPoint events are not)
            "failPoint" -> bson(args["failPoint"]!!.jsonObject).let { command ->
                failPoints += command.getString("configureFailPoint").value
                clients.getValue(args["client"]!!.jsonPrimitive.content).cluster.runCommand("admin", command)
            }
            "wait" -> delay(args["ms"]!!.jsonPrimitive.long)
            "waitForEvent" -> {
                val (ev, spec) = args["event"]!!.jsonObject.entries.single()
                val client = clients.getValue(args["client"]!!.jsonPrimitive.content)
                val count = args["count"]!!.jsonPrimitive.int
                // A heartbeat-driven event can take a full heartbeatFrequencyMS (10 s by default) to happen.
                withTimeout(30.seconds) {
                    while (client.snapshot().count { EventMatching.matches(ev, spec.jsonObject, it) } < count) delay(10)
                }
            }
            "assertEventCount" -> {
                val (ev, spec) = args["event"]!!.jsonObject.entries.single()
                val client = clients.getValue(args["client"]!!.jsonPrimitive.content)
                client.snapshot().count { EventMatching.matches(ev, spec.jsonObject, it) } shouldBe args["count"]!!.jsonPrimitive.int
            }
            "runOnThread" -> {
                val thread = threads.getValue(args["thread"]!!.jsonPrimitive.content)
                val inner = args["operation"]!!.jsonObject
                val previous = thread.lastOrNull()
                thread += scope.async {
                    previous?.await()
                    operation(scope, inner)
                }
            }
            "waitForThread" -> threads.getValue(args["thread"]!!.jsonPrimitive.content).forEach { withTimeout(30.seconds) { it.await() } }
            "close" -> if (cursorOps.isCursor(target)) cursorOps.execute(name, null, target, args, null, null) else clients.getValue(target).cluster.closeSuspending()
            "appendMetadata", "appendClientMetadata" -> clients.getValue(target).cluster.appendMetadata(driverInfo(args["driverInfoOptions"]!!.jsonObject))
            "recordTopologyDescription" -> recorded[args["id"]!!.jsonPrimitive.content] = clients.getValue(args["client"]!!.jsonPrimitive.content).cluster.topology.value
            "assertTopologyType" -> recorded.getValue(args["topologyDescription"]!!.jsonPrimitive.content).type.specName shouldBe args["topologyType"]!!.jsonPrimitive.content
            "waitForPrimaryChange" -> {
                val client = clients.getValue(args["client"]!!.jsonPrimitive.content)
                val prior = recorded.getValue(args["priorTopologyDescription"]!!.jsonPrimitive.content).primary?.address
                val ms = args["timeoutMS"]?.jsonPrimitive?.long ?: 10_000
                withTimeout(ms) { client.cluster.topology.first { it.primary != null && it.primary?.address != prior } }
            }
            "clientBulkWrite" -> return ClientBulkWriteOperation.execute(crudTarget(target, args), args).also { refuseToSave(name, saveAs) }
            // createCollection's result is the collection: saveResultAsEntity makes it a collection entity of [target]
            "createCollection" -> {
                crud.execute(name, crudTarget(target, args), args)
                if (saveAs != null) {
                    check(target in databases) { "createCollection on $target, which is not a database entity" }
                    collections[saveAs] = Collection(target, args["collection"]!!.jsonPrimitive.content, EntityOptions())
                }
            }
            in CrudOperations.OPERATIONS -> return crud.execute(name, crudTarget(target, args), args).also { refuseToSave(name, saveAs) }
            in CursorOperations.OPERATIONS -> {
                val on = if (cursorOps.isCursor(target)) null else crudTarget(target, args)
                return cursorOps.execute(name, on, target, args, sessionOps.argument(args), saveAs)
            }
            in SessionOperations.OPERATIONS -> sessionOps.execute(name, target, args) { clients.getValue(it).snapshot() }
            "assertNumberConnectionsCheckedOut" ->
                cursorOps.connectionsCheckedOut(clients.getValue(args["client"]!!.jsonPrimitive.content).cluster) shouldBe args["connections"]!!.jsonPrimitive.int
            else -> throw UnsupportedOperationException("operation $name")
        }
        if (name != "createCollection") refuseToSave(name, saveAs)
        return null
    }

    /** saveResultAsEntity where this runner keeps no such entity: the test cannot run as written, so it fails. */
    private fun refuseToSave(name: String, saveAs: String?) {
        if (saveAs != null) throw UnsupportedOperationException("saveResultAsEntity ($saveAs) of the $name operation")
    }

    /** The client, database or collection entity [id] as a [CrudTarget], with the options it inherits and the session [args] name. */
    private fun crudTarget(id: String, args: JsonObject): CrudTarget = crudTarget(id).let { t ->
        sessionOps.argument(args)?.let { CrudTarget(t.cluster, t.database, t.collection, t.options, it) } ?: t
    }

    private fun crudTarget(id: String): CrudTarget {
        collections[id]?.let { c ->
            val db = databases.getValue(c.database)
            val client = clients.getValue(db.client)
            return CrudTarget(client.cluster, db.name, c.name, client.options.overriddenBy(db.options).overriddenBy(c.options))
        }
        databases[id]?.let { db ->
            val client = clients.getValue(db.client)
            return CrudTarget(client.cluster, db.name, null, client.options.overriddenBy(db.options))
        }
        val client = clients[id] ?: error("no entity $id")
        return CrudTarget(client.cluster, "admin", null, client.options)
    }

    private fun expectEvents(e: JsonObject) {
        val client = clients.getValue(e["client"]!!.jsonPrimitive.content)
        val family = when (e["eventType"]?.jsonPrimitive?.content ?: "command") {
            "command" -> EventMatching.command
            "cmap" -> EventMatching.cmap
            "sdam" -> EventMatching.sdam
            else -> throw UnsupportedOperationException("eventType ${e["eventType"]}")
        }
        val actual = client.snapshot().filter { ev -> family.values.any { it.isInstance(ev) } }
        val expected = e["events"]!!.jsonArray.map { it.jsonObject.entries.single() }
        val ignoreExtra = (e["ignoreExtraEvents"] as? JsonPrimitive)?.booleanOrNull ?: false
        check(actual.size >= expected.size && (ignoreExtra || actual.size == expected.size)) {
            "expected ${expected.map { it.key }} but got ${actual.map { ev -> ev::class.simpleName + ((ev as? dev.mooring.cmap.CommandEvent)?.let { "(${it.commandName})" } ?: "") }}"
        }
        expected.forEachIndexed { i, (name, spec) ->
            val resolved = sessionOps.resolve(spec).jsonObject
            check(EventMatching.matches(name, resolved, actual[i])) { "event $i: expected $name $resolved, got ${actual[i]}" }
        }
    }

    private suspend fun outcome(o: JsonObject) {
        val db = o["databaseName"]!!.jsonPrimitive.content
        val coll = o["collectionName"]!!.jsonPrimitive.content
        val expected = o["documents"]!!.jsonArray.map { bson(it.jsonObject) }
        val check = MongoCluster(MongoClusterSettings.fromUri(host.uri(emptyMap())))
        try {
            val reply = check.runCommand(db, BsonDocument("find", BsonString(coll)).append("filter", BsonDocument()))
            val docs = reply.getDocument("cursor").getArray("firstBatch").map { it.asDocument() }
            docs.sortedBy { it["_id"].toString() } shouldBe expected.sortedBy { it["_id"].toString() }
        } finally {
            check.closeSuspending()
        }
    }

    companion object {
        /** The fields of each entity kind this runner acts on (unified-test-format.md "entity"). */
        private val ENTITY_FIELDS = mapOf(
            "client" to setOf(
                "id", "uriOptions", "useMultipleMongoses", "observeEvents", "ignoreCommandMonitoringEvents", "observeSensitiveCommands",
                "observeLogMessages", "serverApi", "observeTracingMessages", "awaitMinPoolSizeMS",
            ),
            "database" to setOf("id", "client", "databaseName", "databaseOptions"),
            "collection" to setOf("id", "database", "collectionName", "collectionOptions"),
            "session" to setOf("id", "client", "sessionOptions"),
            "thread" to setOf("id"),
        )

        val SUPPORTED_OPERATIONS = setOf(
            "createEntities", "failPoint", "wait", "waitForEvent", "assertEventCount", "runOnThread", "waitForThread", "close",
            "recordTopologyDescription", "assertTopologyType", "waitForPrimaryChange", "appendMetadata", "appendClientMetadata",
            "assertNumberConnectionsCheckedOut", "clientBulkWrite",
        ) + CrudOperations.OPERATIONS + CursorOperations.OPERATIONS + SessionOperations.OPERATIONS

        /** The unified format's `driverInfoOptions` (name, version, platform) as a [dev.mooring.cmap.DriverInfo]. */
        fun driverInfo(o: JsonObject): dev.mooring.cmap.DriverInfo = dev.mooring.cmap.DriverInfo(
            o["name"]!!.jsonPrimitive.content,
            (o["version"] as? JsonPrimitive)?.contentOrNull,
            (o["platform"] as? JsonPrimitive)?.contentOrNull,
        )

        fun bson(o: JsonObject): BsonDocument = BsonDocument.parse(o.toString())
    }
}
