package dev.mooring.spec.uri

import dev.mooring.events.ServerAddress
import dev.mooring.sdam.ConnectionString
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.sdam.ReadPreference
import dev.mooring.sdam.ReadPreferenceMode
import dev.mooring.sdam.ServerMonitoringMode
import dev.mooring.sdam.WriteAcknowledgement
import dev.mooring.sdam.WriteConcern
import dev.mooring.sdam.mongoClusterSettings
import dev.mooring.sdam.toConnectionString
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldNotContain
import io.kotest.property.Arb
import io.kotest.property.arbitrary.arbitrary
import io.kotest.property.arbitrary.boolean
import io.kotest.property.arbitrary.choice
import io.kotest.property.arbitrary.element
import io.kotest.property.arbitrary.int
import io.kotest.property.arbitrary.list
import io.kotest.property.arbitrary.long
import io.kotest.property.arbitrary.map
import io.kotest.property.arbitrary.orNull
import io.kotest.property.arbitrary.string
import io.kotest.property.arbitrary.subsequence
import io.kotest.property.arbitrary.az
import io.kotest.property.arbitrary.cyrillic
import io.kotest.property.arbitrary.printableAscii
import io.kotest.property.arbitrary.Codepoint
import io.kotest.property.checkAll

/** Property tests: any settings survive settings → URI → settings, and the URI never leaks a password unless asked. */
class SettingsRoundTripSpec : FunSpec({
    val name = Arb.string(1..8, Codepoint.az())
    val secretText = Arb.string(1..12, Arb.choice(Codepoint.printableAscii(), Codepoint.cyrillic()))
    val host = arbitrary {
        when (Arb.int(0..2).bind()) {
            0 -> ServerAddress("${name.bind()}.example.com", Arb.int(1..65535).bind())
            1 -> ServerAddress("::${Arb.int(1..65535).bind().toString(16)}", Arb.int(1..65535).bind())
            else -> ServerAddress.unixSocket("/tmp/${name.bind()}.sock")
        }
    }
    val readPreferences = arbitrary {
        val mode = Arb.element(ReadPreferenceMode.entries).bind()
        if (mode == ReadPreferenceMode.PRIMARY) {
            ReadPreference.PRIMARY
        } else {
            val tags = Arb.list(Arb.map(name, name, 0, 2), 0..2).bind()
            ReadPreference(mode, tags, Arb.long(90L..1000L).orNull().bind())
        }
    }
    val settings = arbitrary {
        // Draw every value first (bind suspends), then build with the DSL.
        val srv = Arb.boolean().bind()
        val srvName = "${name.bind()}.example.com"
        val hostList = Arb.list(host, 1..3).bind()
        val direct = !srv && hostList.size == 1 && Arb.boolean().bind()
        val user = secretText.bind()
        val pw = secretText.bind()
        val rs = name.orNull().bind()
        val maxHosts = if (srv && rs == null) Arb.int(0..5).bind() else 0
        val heartbeat = Arb.long(500L..100_000L).bind()
        val threshold = Arb.long(0L..1000L).bind()
        val selection = Arb.long(1L..100_000L).bind()
        val monitoring = Arb.element(ServerMonitoringMode.entries).bind()
        val rp = readPreferences.bind()
        val timeout = Arb.long(0L..10_000L).orNull().bind()
        val rr = Arb.boolean().bind()
        val rw = Arb.boolean().bind()
        val rcl = name.orNull().bind()
        val w = Arb.choice(arbitrary { WriteAcknowledgement.Nodes(Arb.int(1..5).bind()) }, arbitrary { WriteAcknowledgement.Tag(name.bind()) })
            .orNull().bind()
        val wc = WriteConcern(w, Arb.long(0L..5000L).orNull().bind(), Arb.boolean().orNull().bind())
        val adaptive = Arb.int(0..5).bind()
        val retarget = Arb.boolean().bind()
        val proxyHost = if (Arb.boolean().bind()) "${name.bind()}.proxy" else null
        val proxyPort = Arb.int(1..65535).bind()
        val maxPool = Arb.int(0..500).bind()
        val minPool = if (maxPool == 0) Arb.int(0..10).bind() else Arb.int(0..maxPool).bind()
        val idle = Arb.long(0L..100_000L).bind()
        val connecting = Arb.int(1..10).bind()
        val waitQueue = Arb.long(0L..100_000L).bind()
        val connectTimeout = Arb.long(0L..100_000L).bind()
        val socketTimeout = Arb.long(0L..100_000L).bind()
        val app = secretText.orNull().bind()
        val comp = Arb.subsequence(listOf("snappy", "zlib", "zstd")).bind()
        val zlib = Arb.int(-1..9).bind()
        val tlsOn = Arb.boolean().bind()
        val badHosts = Arb.boolean().bind()
        val ca = name.orNull().bind()
        val keyPw = secretText.orNull().bind()
        val credKind = Arb.int(0..3).bind()
        val source = name.orNull().bind()
        mongoClusterSettings {
            if (srv) applyConnectionString("mongodb+srv://$srvName") else hosts = hostList
            directConnection = direct
            replicaSet = rs
            srvMaxHosts = maxHosts
            heartbeatFrequencyMS = heartbeat
            localThresholdMS = threshold
            serverSelectionTimeoutMS = selection
            serverMonitoringMode = monitoring
            readPreference = rp
            timeoutMS = timeout
            retryReads = rr
            retryWrites = rw
            readConcernLevel = rcl
            writeConcern = wc
            maxAdaptiveRetries = adaptive
            enableOverloadRetargeting = retarget
            if (proxyHost != null) proxy(proxyHost, proxyPort, user, pw)
            pool {
                maxPoolSize = maxPool
                minPoolSize = minPool
                maxIdleTimeMS = idle
                maxConnecting = connecting
                waitQueueTimeoutMS = waitQueue
            }
            connection {
                connectTimeoutMS = connectTimeout
                socketTimeoutMS = socketTimeout
                appName = app
                compressors = comp
                zlibCompressionLevel = zlib
            }
            tls {
                enabled = tlsOn
                allowInvalidHostnames = badHosts
                caFile = ca
                certificateKeyFilePassword = keyPw
            }
            when (credKind) {
                0 -> Unit
                1 -> credential(user, pw.toCharArray(), source = source)
                2 -> credential(user, pw.toCharArray(), mechanism = "SCRAM-SHA-256")
                else -> credential(null, null, mechanism = "MONGODB-X509")
            }
        }
    }

    test("settings -> toConnectionString(includePasswords = true) -> fromUri gives equal settings") {
        checkAll(300, settings) { s ->
            MongoClusterSettings.fromUri(s.toConnectionString(includePasswords = true)) shouldBe s
        }
    }

    test("without includePasswords neither the URI nor its parsed toString shows a password") {
        checkAll(200, settings) { s ->
            val uri = s.toConnectionString()
            val full = ConnectionString.parse(s.toConnectionString(includePasswords = true))
            for (secret in listOfNotNull(s.connection.credential?.password?.let { String(it) }, s.proxy?.password,
                s.connection.tls.certificateKeyFilePassword).filter { it.length >= 4 }) {
                uri shouldNotContain secret
                full.toString() shouldNotContain secret
                full.settings.toString() shouldNotContain secret
            }
        }
    }
})
