package dev.mooring.reliability

import dev.mooring.cmap.CommandStartedEvent
import dev.mooring.driver.Update
import dev.mooring.driver.database
import dev.mooring.events.EventListener
import dev.mooring.events.MooringEvent
import dev.mooring.sdam.ClientSessionOptions
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.sdam.withTransaction
import dev.mooring.testkit.replset.ReplicaSetSimulator
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldBeEmpty
import io.kotest.matchers.ints.shouldBeGreaterThan
import io.kotest.matchers.shouldBe
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Job
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.ensureActive
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.isActive
import kotlinx.coroutines.joinAll
import kotlinx.coroutines.launch
import kotlinx.coroutines.withTimeout
import kotlinx.coroutines.withTimeoutOrNull
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonInt64
import org.bson.BsonString
import org.bson.BsonValue
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicInteger
import kotlin.coroutines.coroutineContext
import kotlin.random.Random
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds

/**
 * Issue 31's reliability check, in the style of a Jepsen bank test: [WORKERS] coroutines move
 * random amounts between [ACCOUNTS] accounts with `withTransaction` (each transfer: two `$inc`
 * updates and the insert of a ledger document with the transfer's unique id, in one transaction)
 * over a three-member replica set simulator, for [RUN_SECONDS] seconds (10 s by default,
 * `-Dmooring.bankSeconds=20` for the issue's 20 s). Meanwhile the primary steps down every 500 ms
 * and another member is elected, and connections are reset at random: a failCommand
 * `closeConnection` fail point on a random command on every member (the fault proxy cannot sit
 * in front of a replica set member, whose hello names its own address).
 *
 * About 10% of the transfers are cancelled, spread over three phases, each landed by the command
 * events: **in the callback** (after its first update returned, or while its ledger insert is in
 * flight: the transaction is open, so `withTransaction` must send `abortTransaction`, which is
 * checked by `(lsid, txnNumber)`), **during the commit** (when its `commitTransaction` starts) and
 * **during a commit retry** (its first `commitTransaction` finds the primary stepped down, from the
 * event, and the cancel lands when the retried commit starts).
 *
 * Checked: during the run, at random, reads in snapshot sessions (`ClientSessionOptions(snapshot =
 * true)`) see the total conserved (the simulator answers snapshot reads from its current
 * committed data: it does not model `atClusterTime`, but one find is atomic); after it, the total
 * is conserved, every acknowledged transfer is in the ledger (none lost), the ledger holds only
 * acknowledged transfers and those whose outcome is unknown (failed or cancelled in the commit),
 * none cancelled in the callback, and each balance is the initial balance plus the ledger's
 * transfers (each transfer applied fully or not at all, and once); every worker ends within a
 * bound (no hang); no connection is checked out and no session left open at the end. The counts
 * are printed (failed transfers by cause too). The simulator detects write conflicts per
 * collection, not per document, so concurrent transfers conflict (WriteConflict,
 * TransientTransactionError) and most callbacks run several times: that is the retry loop under test.
 *
 * Found with it: a PoolClearedError in a transaction was not labelled TransientTransactionError
 * (a third of the transfers failed); the simulator's `stepDown()` left transactions open (one
 * whose session was lost blocked the collection for good).
 */
class BankTransferSpec : FunSpec({
    timeout = 600.seconds.inWholeMilliseconds

    test("bank transfers under failover, connection resets and cancellation: total conserved, nothing lost or applied twice") {
        ReplicaSetSimulator.start(dataMembers = 3, clusterTime = true).use { rs ->
            val observer = BankObserver(rs)
            val uri = rs.seedUri("serverSelectionTimeoutMS=10000&heartbeatFrequencyMS=500&retryWrites=true&retryReads=true")
            val cluster = MongoCluster(MongoClusterSettings.fromUri(uri), listOf(observer))
            try {
                val db = cluster.database("bank")
                val accounts = db.collection("accounts")
                val ledger = db.collection("transfers")
                accounts.insertMany((0 until ACCOUNTS).map { BsonDocument("_id", BsonInt32(it)).append("balance", BsonInt64(INITIAL)) })
                db.createCollection("transfers")

                val acknowledged = ConcurrentHashMap.newKeySet<String>()
                val failed = ConcurrentHashMap.newKeySet<String>()
                val cancelled = ConcurrentHashMap<String, TransferPhase>()
                val abortsExpected = ConcurrentHashMap.newKeySet<String>()
                val missedCancels = AtomicInteger()
                val failures = ConcurrentHashMap<String, AtomicInteger>()
                val callbackRetries = AtomicInteger()
                val snapshotReads = AtomicInteger()
                val snapshotReadErrors = AtomicInteger()
                val sessions = ConcurrentHashMap.newKeySet<dev.mooring.sdam.ClientSession>()
                var resets = 0

                coroutineScope {
                    val chaos = launch {
                        val random = Random(31)
                        while (isActive) {
                            delay(500)
                            val old = observer.stepDown()
                            delay(30)
                            observer.electOther(old, random)
                            if (random.nextBoolean()) {
                                val command = RESET_COMMANDS.random(random)
                                rs.members.forEach { it.configureFailPoint(BsonDocument.parse(resetFailPoint(command))) }
                                resets++
                            }
                        }
                    }
                    val reader = launch {
                        val random = Random(7)
                        while (isActive) {
                            delay(random.nextLong(50, 250))
                            val s = cluster.startSession(ClientSessionOptions(snapshot = true))
                            try {
                                val total = accounts.find(session = s).toList().sumOf { it.getInt64("balance").value }
                                total shouldBe TOTAL
                                snapshotReads.incrementAndGet()
                            } catch (e: dev.mooring.events.MooringException) {
                                snapshotReadErrors.incrementAndGet() // no primary or a reset connection: not an invariant
                            } finally {
                                s.endSession()
                            }
                        }
                    }
                    val deadline = System.nanoTime() + RUN_SECONDS * 1_000_000_000L
                    val workers = (0 until WORKERS).map { w ->
                        launch {
                            val random = Random(1000 + w)
                            var n = 0
                            while (System.nanoTime() < deadline) {
                                val id = "w$w-${n++}"
                                val from = random.nextInt(ACCOUNTS)
                                val to = (from + 1 + random.nextInt(ACCOUNTS - 1)) % ACCOUNTS
                                val amount = random.nextLong(1, 100)
                                val plan = if (random.nextInt(10) == 0) TransferPhase.entries.random(random) else null
                                val control = TransferControl(plan, inFlight = random.nextBoolean())
                                val session = cluster.startSession()
                                sessions += session
                                var outcome: TransferOutcome = TransferOutcome.Failed
                                val job = launch(start = CoroutineStart.LAZY) {
                                    try {
                                        var attempts = 0
                                        session.withTransaction { s ->
                                            if (++attempts > 1) callbackRetries.incrementAndGet()
                                            accounts.updateOne(byId(from), inc(-amount), session = s)
                                            if (plan == TransferPhase.Callback && !control.inFlight) {
                                                control.landCallback(observer.currentTransaction(s.lsid))
                                                coroutineContext.ensureActive()
                                            }
                                            accounts.updateOne(byId(to), inc(amount), session = s)
                                            ledger.insertOne(ledgerEntry(id, from, to, amount), session = s)
                                        }
                                        outcome = TransferOutcome.Acknowledged
                                    } catch (e: CancellationException) {
                                        outcome = TransferOutcome.Cancelled
                                        throw e
                                    } catch (e: Exception) {
                                        failures.computeIfAbsent(reason(e)) { AtomicInteger() }.incrementAndGet()
                                        outcome = TransferOutcome.Failed
                                    }
                                }
                                control.job = job
                                observer.track(session.lsid, control)
                                job.start()
                                job.join()
                                observer.untrack(session.lsid)
                                session.endSession()
                                when (outcome) {
                                    TransferOutcome.Acknowledged -> acknowledged += id
                                    TransferOutcome.Failed -> failed += id
                                    TransferOutcome.Cancelled -> {
                                        val landed = checkNotNull(control.landed) { "$id was cancelled, but not by the spec" }
                                        cancelled[id] = landed
                                        control.abortKey?.let { abortsExpected += it }
                                    }
                                }
                                if (plan != null && control.landed == null) missedCancels.incrementAndGet()
                            }
                        }
                    }
                    // every worker ends (a transfer gives up after withTransaction's 120 s): a hang fails the test here
                    withTimeout((RUN_SECONDS + 150).seconds) { workers.joinAll() }
                    chaos.cancelAndJoin()
                    reader.cancelAndJoin()
                }
                rs.members.forEach { it.clearFailPoint() }
                if (rs.primary == null) rs.elect(rs.members.first())

                // the ledger and the balances, read after the run
                val balances = accounts.find().toList().associate { it.getInt32("_id").value to it.getInt64("balance").value }
                val entries = ledger.find().toList()
                val ledgerIds = entries.map { it.getString("_id").value }.toSet()
                balances.values.sum() shouldBe TOTAL
                val expected = (0 until ACCOUNTS).associateWith { INITIAL }.toMutableMap()
                for (e in entries) {
                    val amount = e.getInt64("amount").value
                    expected.merge(e.getInt32("from").value, -amount, Long::plus)
                    expected.merge(e.getInt32("to").value, amount, Long::plus)
                }
                balances shouldBe expected
                (acknowledged - ledgerIds).shouldBeEmpty() // none lost
                val uncertain = failed + cancelled.filterValues { it != TransferPhase.Callback }.keys
                (ledgerIds - acknowledged - uncertain).shouldBeEmpty() // nothing applied that was not asked for
                (cancelled.filterValues { it == TransferPhase.Callback }.keys intersect ledgerIds).shouldBeEmpty()
                // every abort the spec requires was sent: each transfer cancelled in its callback, transaction open
                (abortsExpected - observer.abortsStarted).shouldBeEmpty()

                // no leaks: no connection checked out, every session ended
                val inUse = withTimeoutOrNull(10.seconds) {
                    while (cluster.poolStatistics().values.sumOf { it.inUseConnections } != 0) delay(20.milliseconds)
                }
                if (inUse == null) cluster.poolStatistics().values.sumOf { it.inUseConnections } shouldBe 0
                sessions.filterNot { it.isEnded }.shouldBeEmpty()

                val byPhase = TransferPhase.entries.associateWith { p -> cancelled.values.count { it == p } }
                val cancelledApplied = cancelled.keys.count { it in ledgerIds }
                println(
                    "bank: seconds=$RUN_SECONDS transfers acknowledged=${acknowledged.size} failed=${failed.size} " +
                        "ledger=${ledgerIds.size} stepdowns=${observer.stepdowns.get()} resets=$resets " +
                        "cancels callback=${byPhase[TransferPhase.Callback]} commit=${byPhase[TransferPhase.Commit]} commitRetry=${byPhase[TransferPhase.CommitRetry]} " +
                        "(applied=$cancelledApplied absent=${cancelled.size - cancelledApplied}, not landed=${missedCancels.get()}) " +
                        "abortsForCallbackCancels=${abortsExpected.size} callbackRetries=${callbackRetries.get()} " +
                        "commitRetries=${observer.commitRetries.get()} snapshotReads=${snapshotReads.get()} (errors ${snapshotReadErrors.get()})",
                )
                if (failures.isNotEmpty()) println("bank: failed transfers by cause: " + failures.entries.sortedByDescending { it.value.get() }.joinToString { "${it.key} x${it.value}" })
                acknowledged.size shouldBeGreaterThan 0
                observer.stepdowns.get() shouldBeGreaterThan 0
            } finally {
                cluster.closeSuspending()
            }
        }
    }
})

private enum class TransferPhase { Callback, Commit, CommitRetry }

private enum class TransferOutcome { Acknowledged, Failed, Cancelled }

/** One transfer's cancellation plan and what became of it; [landCallback] / the observer cancel [job] once. */
private class TransferControl(val plan: TransferPhase?, val inFlight: Boolean) {
    @Volatile lateinit var job: Job

    @Volatile var landed: TransferPhase? = null

    /** `lsid:txnNumber` of a transaction cancelled while open: its abort must be sent. */
    @Volatile var abortKey: String? = null

    fun landCallback(transaction: String?) {
        abortKey = transaction
        land(TransferPhase.Callback)
    }

    fun land(phase: TransferPhase) {
        if (landed != null) return
        landed = phase
        job.cancel()
    }
}

/**
 * The spec's command listener: lands the planned cancellations on the command events of the
 * tracked sessions, counts commit retries (a `commitTransaction` sent again for one
 * `(lsid, txnNumber)`) and records the `abortTransaction`s started. Steps the primary down
 * (with [stepDown]) for the chaos and for the commit-retry phase, under one lock.
 */
private class BankObserver(private val rs: ReplicaSetSimulator) : EventListener {
    private val controls = ConcurrentHashMap<BsonValue, TransferControl>()
    private val lastTxn = ConcurrentHashMap<BsonValue, Long>()
    private val commits = ConcurrentHashMap<String, AtomicInteger>()
    val abortsStarted: MutableSet<String> = ConcurrentHashMap.newKeySet()
    val commitRetries = AtomicInteger()
    val stepdowns = AtomicInteger()
    private val lock = Any()
    private val random = Random(99)

    fun track(lsid: BsonDocument, control: TransferControl) {
        controls[lsid["id"]!!] = control
    }

    fun untrack(lsid: BsonDocument) {
        controls.remove(lsid["id"]!!)
    }

    /** `lsid:txnNumber` of the last transaction command sent in the session [lsid]. */
    fun currentTransaction(lsid: BsonDocument): String? = lastTxn[lsid["id"]!!]?.let { key(lsid["id"]!!, it) }

    /** Steps the primary down, if there is one; returns it. */
    fun stepDown(): dev.mooring.testkit.replset.SimulatedMember? = synchronized(lock) {
        val old = rs.primary ?: return null
        rs.stepDown(old)
        stepdowns.incrementAndGet()
        old
    }

    /** Elects a member other than [old] when the set has no primary. */
    fun electOther(old: dev.mooring.testkit.replset.SimulatedMember?, random: Random) = synchronized(lock) {
        if (rs.primary == null) rs.elect(rs.members.filter { it !== old }.random(random))
    }

    override fun onEvent(event: MooringEvent) {
        if (event !is CommandStartedEvent) return
        val id = (event.command["lsid"] as? BsonDocument)?.get("id") ?: return
        val txn = event.command["txnNumber"]?.takeIf { it.isNumber }?.asNumber()?.longValue() ?: return
        lastTxn[id] = txn
        val control = controls[id]
        when (event.commandName) {
            "insert" -> if (control?.plan == TransferPhase.Callback && control.inFlight && event.command.getString("insert").value == "transfers") {
                control.landCallback(key(id, txn))
            }
            "abortTransaction" -> abortsStarted += key(id, txn)
            "commitTransaction" -> {
                val sent = commits.computeIfAbsent(key(id, txn)) { AtomicInteger() }.incrementAndGet()
                if (sent > 1) commitRetries.incrementAndGet()
                when (control?.plan) {
                    TransferPhase.Commit -> control.land(TransferPhase.Commit)
                    TransferPhase.CommitRetry -> if (sent > 1) {
                        control.land(TransferPhase.CommitRetry)
                    } else {
                        // the commit about to be sent finds its primary stepped down: it is retried elsewhere
                        synchronized(lock) {
                            val old = rs.primary
                            if (old != null && old.host == event.address.toString()) {
                                stepDown()
                                rs.elect(rs.members.filter { it !== old }.random(random))
                            }
                        }
                    }
                    else -> {}
                }
            }
        }
    }

    private fun key(id: BsonValue, txn: Long) = "${id.asBinary().data.contentToString()}:$txn"
}

/** An error's class, code and labels, to tally the causes of failed transfers. */
private fun reason(e: Throwable): String {
    val code = (e as? dev.mooring.cmap.MongoCommandException)?.code
    val labels = (e as? dev.mooring.events.MooringException)?.errorLabels
    return "${e::class.simpleName}${code?.let { "($it)" } ?: ""}$labels: ${e.message?.take(120)}"
}

private fun byId(id: Int) = BsonDocument("_id", BsonInt32(id))

private fun inc(amount: Long) = Update.Operators(BsonDocument("\$inc", BsonDocument("balance", BsonInt64(amount))))

private fun ledgerEntry(id: String, from: Int, to: Int, amount: Long) =
    BsonDocument("_id", BsonString(id)).append("from", BsonInt32(from)).append("to", BsonInt32(to)).append("amount", BsonInt64(amount))

private fun resetFailPoint(command: String) =
    "{configureFailPoint: 'failCommand', mode: {times: 1}, data: {failCommands: ['$command'], closeConnection: true}}"

private val RESET_COMMANDS = listOf("update", "insert", "commitTransaction", "abortTransaction", "find")
private const val WORKERS = 32
private const val ACCOUNTS = 10
private const val INITIAL = 1_000L
private const val TOTAL = ACCOUNTS * INITIAL
private val RUN_SECONDS: Long = System.getProperty("mooring.bankSeconds")?.toLongOrNull() ?: 10L
