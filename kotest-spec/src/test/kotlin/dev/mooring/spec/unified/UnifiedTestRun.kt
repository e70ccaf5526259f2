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
import kotlinx.serialization.json.JsonElement
import kotlinx.coroutines.flow.toList
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
    private val gridfs = GridFsOperations()
    private lateinit var cursorOps: CursorOperations
    private val changeStreamOps = ChangeStreamOperations()

    private val clients = LinkedHashMap<String, Client>()
    private val databases = HashMap<String, Database>()
    private val collections = HashMap<String, Collection>()
    private val threads = HashMap<String, MutableList<Deferred<Unit>>>()
    private val recorded = HashMap<String, TopologyDescription>()
    private val logCaptures = HashMap<String, LogCapture>()
    private val failPoints = Collections.synchronizedSet(LinkedHashSet<String>())
    /** Every name in the test's entity map (unified-test-format.md "Entity Map": unique, and every reference resolved). */
    private val entityIds = Collections.synchronizedSet(HashSet<String>())

    private fun claimEntityId(id: String) {
        if (!entityIds.add(id)) invalidTest("entity id '$id' is already in use")
    }

    private fun isEntity(id: String) = id in entityIds

    /** The [kind] entity that [ref] names in [entities]; an undefined name or an entity of another type is the file's error. */
    private fun <T> entityOf(kind: String, ref: JsonElement?, entities: Map<String, T>): T {
        val id = (ref as? JsonPrimitive)?.contentOrNull ?: invalidTest("the name of a $kind entity is required")
        return entities[id] ?: invalidTest(if (isEntity(id)) "entity '$id' is not a $kind" else "'$id' is not a defined entity (a $kind is required)")
    }

    private fun clientArg(args: JsonObject): Client = entityOf("client", args["client"], clients)

    /**
     * Runs [test]. A failure the format makes the runner raise is a [UnifiedTestFailure]; an
     * assertion library's failure becomes [UnifiedTestFailure.ExpectationFailed] and a feature this
     * runner lacks ([UnsupportedOperationException], which Mooring's libraries never throw)
     * [UnifiedTestFailure.UnsupportedByRunner]; anything else propagates as it is (a crash).
     */
    suspend fun run(test: JsonObject) {
        try {
            runClassified(test)
        } catch (e: UnifiedTestFailure) {
            throw e
        } catch (e: UnsupportedOperationException) {
            throw UnifiedTestFailure.UnsupportedByRunner(e.message ?: e.toString())
        } catch (e: AssertionError) {
            throw UnifiedTestFailure.ExpectationFailed(e.message ?: e.toString(), e)
        }
    }

    private suspend fun runClassified(test: JsonObject) {
        try {
            host.beforeTest()
            coroutineScope {
                cursorOps = CursorOperations(this)
                UnifiedTracing.reset()
                // "Executing a Test": initialData is processed first, then the entity map is created
                file["initialData"]?.jsonArray?.forEach { initialData(it.jsonObject) }
                file["createEntities"]?.let { createEntities(it.jsonArray) }
                test["operations"]!!.jsonArray.forEach { operation(this, it.jsonObject) }
                threads.values.flatten().forEach { it.await() }
                test["expectEvents"]?.jsonArray?.forEach { expectEvents(it.jsonObject) }
                test["expectLogMessages"]?.jsonArray?.forEach { e ->
                    val id = e.jsonObject["client"]!!.jsonPrimitive.content
                    val capture = logCaptures[id] ?: invalidTest("expectLogMessages for client $id, which has no observeLogMessages")
                    LogCapture.expect(e.jsonObject, capture.snapshot())
                }
                test["expectTracingMessages"]?.jsonArray?.forEach { UnifiedTracing.expect(sessionOps.resolveForSpans(it).jsonObject) }
                test["outcome"]?.jsonArray?.forEach { outcome(it.jsonObject) }
                cursorOps.closeAll()
                changeStreamOps.closeAll()
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
            val (kind, spec) = e.jsonObject.entries.singleOrNull() ?: invalidTest("an entity object must have exactly one entity type: $e")
            val o = spec as? JsonObject ?: invalidTest("the $kind entity must be an object")
            val id = (o["id"] as? JsonPrimitive)?.contentOrNull ?: invalidTest("the $kind entity has no id")
            if (kind !in ENTITY_FIELDS) throw UnsupportedOperationException("entity $kind")
            claimEntityId(id)
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
                        val version = (api["version"] as? JsonPrimitive)?.contentOrNull ?: invalidTest("client $id: serverApi has no version (required)")
                        // unified-test-format.md "serverApi": the runner MUST fail for a version the driver does not support
                        val declared = try {
                            ServerApi(version, flag("strict"), flag("deprecationErrors"))
                        } catch (e: IllegalArgumentException) {
                            throw UnifiedTestFailure.InvalidTestFile("client $id: serverApi version '$version' is not supported by Mooring (${e.message})", e)
                        }
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
                    entityOf("client", o["client"], clients).let { o["client"]!!.jsonPrimitive.content },
                    o["databaseName"]!!.jsonPrimitive.content,
                    entityOptions(o["databaseOptions"]?.jsonObject),
                )
                "collection" -> collections[id] = Collection(
                    entityOf("database", o["database"], databases).let { o["database"]!!.jsonPrimitive.content },
                    o["collectionName"]!!.jsonPrimitive.content,
                    entityOptions(o["collectionOptions"]?.jsonObject),
                )
                "thread" -> threads[id] = ArrayList()
                "session" -> entityOf("client", o["client"], clients).let { sessionOps.create(id, it.cluster, o, it.options) }
                "bucket" -> gridfs.create(id, crudTarget(entityOf("database", o["database"], databases).let { o["database"]!!.jsonPrimitive.content }), o["bucketOptions"] as? JsonObject)
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
            // the collection and its queryable-encryption state collections (unified-test-format.md "Executing a Test")
            for (name in listOf(coll, "enxcol_.$coll.esc", "enxcol_.$coll.ecoc")) {
                try {
                    setup.runCommand(db, BsonDocument("drop", BsonString(name)).append("writeConcern", majority))
                } catch (e: dev.mooring.cmap.MongoCommandException) {
                    if (e.code != 26) throw e
                }
            }
            val createOptions = (d["createOptions"] as? JsonObject)?.let { bson(it) }
            if (createOptions != null) {
                val create = BsonDocument("create", BsonString(coll))
                create.putAll(createOptions)
                setup.runCommand(db, create.append("writeConcern", majority))
            }
            val docs = (d["documents"] as? JsonArray ?: invalidTest("initialData for $db.$coll has no documents array (required)")).map { bson(it.jsonObject) }
            if (docs.isNotEmpty()) {
                setup.runCommand(db, BsonDocument("insert", BsonString(coll)).append("documents", BsonArray(docs)).append("writeConcern", majority))
            } else if (createOptions == null) {
                setup.runCommand(db, BsonDocument("create", BsonString(coll)).append("writeConcern", majority))
            }
        } finally {
            setup.closeSuspending()
        }
    }

    /** Runs the test operation [op] with its assertions; with [propagate] (a withTransaction callback's) its error is rethrown after them. */
    private suspend fun operation(scope: CoroutineScope, op: JsonObject, propagate: Boolean = false) {
        val name = (op["name"] as? JsonPrimitive)?.contentOrNull ?: invalidTest("an operation has no name (required): $op")
        val target = (op["object"] as? JsonPrimitive)?.contentOrNull ?: invalidTest("operation $name has no object (required)")
        val args = op["arguments"]?.let { it as? JsonObject ?: invalidTest("operation $name: arguments must be a document") } ?: JsonObject(emptyMap())
        val expectError = op["expectError"]?.let { it as? JsonObject ?: invalidTest("operation $name: expectError must be a document") }
        val ignore = op["ignoreResultAndError"]?.let { (it as? JsonPrimitive)?.booleanOrNull ?: invalidTest("operation $name: ignoreResultAndError must be a boolean") } ?: false
        val saveAs = op["saveResultAsEntity"]?.let { (it as? JsonPrimitive)?.takeIf { p -> p.isString }?.content ?: invalidTest("operation $name: saveResultAsEntity must be a string") }
        if (expectError != null && (op.containsKey("expectResult") || saveAs != null)) invalidTest("operation $name: expectError excludes expectResult and saveResultAsEntity")
        if (ignore && (expectError != null || op.containsKey("expectResult"))) invalidTest("operation $name: ignoreResultAndError excludes expectError and expectResult")
        // the object and the arguments are the file's to get right, whatever the operation's outcome is asserted to be
        if (target != TEST_RUNNER && !isEntity(target)) invalidTest("operation $name: object '$target' is not a defined entity")
        OperationArguments.requireValid(name, args, special = target == TEST_RUNNER)
        saveAs?.let { if (isEntity(it)) invalidTest("operation $name: saveResultAsEntity '$it' names an entity that already exists") }
        val result = runCatching { execute(scope, name, target, args, saveAs) }
        saveAs?.takeIf { result.isSuccess }?.let { claimEntityId(it) }
        val error = result.exceptionOrNull()
        // the runner's own failures are never an operation's outcome: not expected, not ignored
        when (error) {
            is UnifiedTestFailure -> throw error
            is UnsupportedOperationException -> throw UnifiedTestFailure.UnsupportedByRunner(error.message ?: error.toString())
            is AssertionError -> throw UnifiedTestFailure.ExpectationFailed(error.message ?: error.toString(), error)
            else -> Unit
        }
        if (ignore) { if (propagate && error != null) throw error; return }
        if (expectError == null) {
            if (error != null) throw UnifiedTestFailure.ExpectationFailed("operation $name on $target failed: $error", error)
            op["expectResult"]?.let { expected ->
                val actual = result.getOrNull() ?: throw UnsupportedOperationException("expectResult of $name")
                expectThat(ValueMatching.matchesResult(name, BsonDocument.parse("{\"v\": ${gridfs.resolve(expected)}}")["v"]!!, actual)) { "operation $name: expected result $expected, got $actual" }
            }
            return
        }
        if (error == null) throw UnifiedTestFailure.ExpectationFailed("operation $name on $target was expected to fail ($expectError) but succeeded")
        for ((k, v) in expectError) {
            when (k) {
                "isError" -> Unit
                "isClientError" -> expectThat(ErrorOrigin.isClientError(error) == v.jsonPrimitive.booleanOrNull) { "error $error: expected isClientError $v" }
                "errorCode" -> expectThat(serverCode(error) == v.jsonPrimitive.int) { "error $error: expected code $v" }
                "errorContains" -> expectThat(error.message.orEmpty().contains(v.jsonPrimitive.content, ignoreCase = true)) { "error $error does not contain $v" }
                "errorLabelsContain" -> v.jsonArray.forEach { l ->
                    expectThat(CrudOperations.hasErrorLabel(error, l.jsonPrimitive.content)) { "error $error lacks label $l (has ${(error as? MooringException)?.errorLabels})" }
                }
                "errorLabelsOmit" -> v.jsonArray.forEach { l ->
                    expectThat(!CrudOperations.hasErrorLabel(error, l.jsonPrimitive.content)) { "error $error has label $l" }
                }
                "errorCodeName" -> expectThat(CrudOperations.errorCodeName(error) == v.jsonPrimitive.content) { "error $error: expected code name $v" }
                "writeErrors" -> {
                    val found = ClientBulkWriteOperation.writeErrors(error) ?: throw AssertionError("error $error has no writeErrors")
                    // unified-test-format.md: the same indexes, each writeError matched as a root-level document
                    val expected = BsonDocument.parse(v.toString())
                    expectThat(expected.keys == found.keys && expected.all { (k, e) -> ValueMatching.matches(e, found[k], root = true) }) {
                        "operation $name: expected writeErrors $v, got $found"
                    }
                }
                "writeConcernErrors" -> {
                    val found = ClientBulkWriteOperation.writeConcernErrors(error) ?: throw AssertionError("error $error has no writeConcernErrors")
                    // unified-test-format.md: the same list, each writeConcernError matched as a root-level document
                    val expected = BsonDocument.parse("{\"v\": $v}")["v"]!!.asArray()
                    expectThat(expected.size == found.size && expected.indices.all { ValueMatching.matches(expected[it], found[it], root = true) }) {
                        "operation $name: expected writeConcernErrors $v, got $found"
                    }
                }
                "expectResult" -> {
                    val thrown = result.exceptionOrNull()
                    val partial = thrown?.let(DriverResults::partialResult) ?: thrown?.let(ClientBulkWriteOperation::partialResult)
                    // a client bulk write with no successful write reports no partial result (bulk-write.md): absent, matched as unset
                    if (partial == null && thrown is dev.mooring.driver.ClientBulkWriteException) {
                        expectThat(ValueMatching.matches(BsonDocument.parse("{\"v\": $v}")["v"]!!, null)) { "operation $name: expected partial result $v, got none" }
                        continue
                    }
                    partial ?: throw UnsupportedOperationException(
                            "expectError.expectResult of $name: the error ${thrown?.let { it::class.qualifiedName }} carries no partial result " +
                                "(the driver reports one only in MongoBulkWriteException and MongoWriteConcernException)",
                        )
                    expectThat(ValueMatching.matches(BsonDocument.parse("{\"v\": $v}")["v"]!!, partial)) { "operation $name: expected partial result $v, got $partial" }
                }
                "errorResponse" -> {
                    val response = serverResponse(error) ?: throw UnifiedTestFailure.ExpectationFailed("error $error carries no server response (expected $v)", error)
                    expectThat(ValueMatching.matches(BsonDocument.parse(v.toString()), response)) { "operation $name: expected error response $v, got $response" }
                }
                "isTimeoutError" -> expectThat((error is MongoOperationTimeoutException) == v.jsonPrimitive.boolean) { "error $error: expected isTimeoutError $v" }
                else -> throw UnsupportedOperationException("expectError.$k")
            }
        }
        if (propagate) throw error
    }

    /** The server's reply behind [error] (a command error's response, a write error's reply), or null. */
    private fun serverResponse(error: Throwable): BsonDocument? = generateSequence(error) { it.cause }.firstNotNullOfOrNull {
        when (it) {
            is dev.mooring.cmap.MongoCommandException -> it.response
            is CrudWriteException -> it.reply
            else -> null
        }
    }

    /** The server's error code behind [error]: a command error's code, or the code an authentication failure carries. */
    private fun serverCode(error: Throwable): Int? = generateSequence(error) { it.cause }.firstNotNullOfOrNull {
        when (it) {
            is dev.mooring.cmap.MongoCommandException -> it.code
            is dev.mooring.cmap.MongoAuthenticationException -> it.serverCode
            is CrudWriteException -> it.code
            else -> DriverResults.errorCode(it)
        }
    }

    /** Runs one operation; returns its result for the CRUD operations and runCommand, null for the others. */
    private suspend fun execute(scope: CoroutineScope, name: String, target: String, args: JsonObject, saveAs: String?): BsonValue? {
        if (gridfs.isBucket(target)) return gridfs.execute(name, target, args, sessionOps.argument(args), saveAs)
        when (name) {
            "createEntities" -> createEntities(args["entities"]!!.jsonArray)
            // as the format requires, through the named client (its checkout is observed; configureFailPoint events are not)
            "failPoint" -> bson(args["failPoint"]!!.jsonObject).let { command ->
                failPoints += command.getString("configureFailPoint").value
                clientArg(args).cluster.runCommand("admin", command)
            }
            "wait" -> delay(args["ms"]!!.jsonPrimitive.long)
            "waitForEvent" -> {
                val (ev, spec) = args["event"]!!.jsonObject.entries.single()
                val client = clientArg(args)
                val count = args["count"]!!.jsonPrimitive.int
                // A heartbeat-driven event can take a full heartbeatFrequencyMS (10 s by default) to happen.
                withTimeout(30.seconds) {
                    while (client.snapshot().count { EventMatching.matches(ev, spec.jsonObject, it) } < count) delay(10)
                }
            }
            "assertEventCount" -> {
                val (ev, spec) = args["event"]!!.jsonObject.entries.single()
                val client = clientArg(args)
                client.snapshot().count { EventMatching.matches(ev, spec.jsonObject, it) }.let { n ->
                    expectThat(n == args["count"]!!.jsonPrimitive.int) { "assertEventCount: expected ${args["count"]} $ev, the client published $n" }
                }
            }
            "runOnThread" -> {
                val thread = entityOf("thread", args["thread"], threads)
                val inner = args["operation"]!!.jsonObject
                val previous = thread.lastOrNull()
                thread += scope.async {
                    previous?.await()
                    operation(scope, inner)
                }
            }
            "waitForThread" -> entityOf("thread", args["thread"], threads).forEach { withTimeout(30.seconds) { it.await() } }
            "close" -> if (changeStreamOps.isChangeStream(target)) changeStreamOps.close(target) else if (cursorOps.isCursor(target)) cursorOps.execute(name, null, target, args, null, null) else entityOf("client", JsonPrimitive(target), clients).cluster.closeSuspending()
            "appendMetadata", "appendClientMetadata" -> entityOf("client", JsonPrimitive(target), clients).cluster.appendMetadata(driverInfo(args["driverInfoOptions"]!!.jsonObject))
            "recordTopologyDescription" -> args["id"]!!.jsonPrimitive.content.let { id ->
                recorded[id] = clientArg(args).cluster.topology.value
                claimEntityId(id)
            }
            "assertTopologyType" -> entityOf("topologyDescription", args["topologyDescription"], recorded).type.specName.let { type ->
                expectThat(type == args["topologyType"]!!.jsonPrimitive.content) { "assertTopologyType: expected ${args["topologyType"]}, the topology was $type" }
            }
            "waitForPrimaryChange" -> {
                val client = clientArg(args)
                val prior = entityOf("topologyDescription", args["priorTopologyDescription"], recorded).primary?.address
                val ms = args["timeoutMS"]?.jsonPrimitive?.long ?: 10_000
                withTimeout(ms) { client.cluster.topology.first { it.primary != null && it.primary?.address != prior } }
            }
            "clientBulkWrite" -> return ClientBulkWriteOperation.execute(crudTarget(target, args), args).also { refuseToSave(name, saveAs) }
            // createCollection's result is the collection: saveResultAsEntity makes it a collection entity of [target]
            "createCollection" -> {
                crud.execute(name, crudTarget(target, args), args)
                if (saveAs != null) {
                    if (target !in databases) invalidTest("createCollection on $target, which is not a database entity")
                    collections[saveAs] = Collection(target, args["collection"]!!.jsonPrimitive.content, EntityOptions())
                }
            }
            in CrudOperations.OPERATIONS -> return crud.execute(name, crudTarget(target, args), args).also { refuseToSave(name, saveAs) }
            "createChangeStream" -> return changeStreamOps.create(crudTarget(target), target in clients, args, sessionOps.argument(args), saveAs)
            in CursorOperations.OPERATIONS -> {
                if (changeStreamOps.isChangeStream(target)) return changeStreamOps.iterate(name, target)
                val on = if (cursorOps.isCursor(target)) null else crudTarget(target, args)
                return cursorOps.execute(name, on, target, args, sessionOps.argument(args), saveAs)
            }
            in SessionOperations.OPERATIONS -> sessionOps.execute(
                name, target, args, { entityOf("client", JsonPrimitive(it), clients).snapshot() },
                callback = { op -> operation(scope, op, propagate = true) },
                failPointOn = { address, command ->
                    failPoints += command.getString("configureFailPoint").value
                    MongoCluster("mongodb://$address/?directConnection=true").use { it.runCommand("admin", command) }
                },
            )
            "assertCollectionExists", "assertCollectionNotExists" -> {
                val db = args["databaseName"]!!.jsonPrimitive.content
                val coll = args["collectionName"]!!.jsonPrimitive.content
                // every name (nameOnly, no filter: the test kit's engine takes no listCollections filter), then this one among them
                val exists = internal { it.runCursorCommand(db, BsonDocument("listCollections", BsonInt32(1)).append("nameOnly", org.bson.BsonBoolean.TRUE)).toList() }
                    .any { it["name"] == BsonString(coll) }
                expectThat(exists == (name == "assertCollectionExists")) { "$name: collection $db.$coll ${if (exists) "exists" else "does not exist"}" }
            }
            "assertIndexExists", "assertIndexNotExists" -> {
                val db = args["databaseName"]!!.jsonPrimitive.content
                val coll = args["collectionName"]!!.jsonPrimitive.content
                val index = args["indexName"]!!.jsonPrimitive.content
                val names = try {
                    internal { it.runCommand(db, BsonDocument("listIndexes", BsonString(coll))) }.getDocument("cursor").getArray("firstBatch").map { it.asDocument().getString("name").value }
                } catch (e: dev.mooring.cmap.MongoCommandException) {
                    if (e.code != 26) throw e
                    emptyList() // a missing collection has no index
                }
                expectThat((index in names) == (name == "assertIndexExists")) { "$name: $db.$coll has the indexes $names" }
            }
            "assertNumberConnectionsCheckedOut" ->
                cursorOps.connectionsCheckedOut(clientArg(args).cluster).let { n ->
                    expectThat(n == args["connections"]!!.jsonPrimitive.int) { "assertNumberConnectionsCheckedOut: expected ${args["connections"]}, the client has $n checked out" }
                }
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
        val client = clients[id] ?: invalidTest("entity '$id' is not a client, database or collection")
        return CrudTarget(client.cluster, "admin", null, client.options)
    }

    /** Runs [block] on a client of the runner's own, which no client entity observes (the format's "internal MongoClient"). */
    private suspend fun <R> internal(block: suspend (MongoCluster) -> R): R {
        val cluster = MongoCluster(MongoClusterSettings.fromUri(host.uri(emptyMap())))
        try {
            return block(cluster)
        } finally {
            cluster.closeSuspending()
        }
    }

    private fun expectEvents(e: JsonObject) {
        val client = entityOf("client", e["client"], clients)
        val family = when (e["eventType"]?.jsonPrimitive?.content ?: "command") {
            "command" -> EventMatching.command
            "cmap" -> EventMatching.cmap
            "sdam" -> EventMatching.sdam
            else -> throw UnsupportedOperationException("eventType ${e["eventType"]}")
        }
        val actual = client.snapshot().filter { ev -> family.values.any { it.isInstance(ev) } }
        val expected = e["events"]!!.jsonArray.map { it.jsonObject.entries.single() }
        val ignoreExtra = (e["ignoreExtraEvents"] as? JsonPrimitive)?.booleanOrNull ?: false
        expectThat(actual.size >= expected.size && (ignoreExtra || actual.size == expected.size)) {
            "expected ${expected.map { it.key }} but got ${actual.map { ev -> ev::class.simpleName + ((ev as? dev.mooring.cmap.CommandEvent)?.let { "(${it.commandName})" } ?: "") }}"
        }
        expected.forEachIndexed { i, (name, spec) ->
            val resolved = gridfs.resolve(sessionOps.resolve(spec)).jsonObject
            expectThat(EventMatching.matches(name, resolved, actual[i])) { "event $i: expected $name $resolved, got ${actual[i]}" }
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
            val sorted = docs.sortedBy { it["_id"].toString() }
            expectThat(sorted == expected.sortedBy { it["_id"].toString() }) { "outcome of $db.$coll: expected $expected, found $sorted" }
        } finally {
            check.closeSuspending()
        }
    }

    companion object {
        /** The object of the special test operations. */
        const val TEST_RUNNER = "testRunner"

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
            "bucket" to setOf("id", "database", "bucketOptions"),
        )

        val SUPPORTED_OPERATIONS = setOf(
            "createEntities", "failPoint", "wait", "waitForEvent", "assertEventCount", "runOnThread", "waitForThread", "close",
            "recordTopologyDescription", "assertTopologyType", "waitForPrimaryChange", "appendMetadata", "appendClientMetadata",
            "assertNumberConnectionsCheckedOut", "clientBulkWrite", "assertCollectionExists", "assertCollectionNotExists",
            "assertIndexExists", "assertIndexNotExists", "createChangeStream",
        ) + CrudOperations.OPERATIONS + CursorOperations.OPERATIONS + SessionOperations.OPERATIONS + GridFsOperations.OPERATIONS

        /** The unified format's `driverInfoOptions` (name, version, platform) as a [dev.mooring.cmap.DriverInfo]. */
        fun driverInfo(o: JsonObject): dev.mooring.cmap.DriverInfo = dev.mooring.cmap.DriverInfo(
            o["name"]!!.jsonPrimitive.content,
            (o["version"] as? JsonPrimitive)?.contentOrNull,
            (o["platform"] as? JsonPrimitive)?.contentOrNull,
        )

        fun bson(o: JsonObject): BsonDocument = BsonDocument.parse(o.toString())
    }
}
