package dev.mooring.sdam.uri

import dev.mooring.cmap.DriverInfo
import dev.mooring.cmap.MongoCredential
import dev.mooring.cmap.ProxySettings
import dev.mooring.events.ServerAddress
import dev.mooring.sdam.InvalidConnectionStringException
import dev.mooring.sdam.InvalidSettingsException
import dev.mooring.sdam.MongoClusterSettings
import dev.mooring.sdam.ReadPreference
import dev.mooring.sdam.ReadPreferenceMode
import dev.mooring.sdam.ServerMonitoringMode
import dev.mooring.sdam.WriteAcknowledgement
import dev.mooring.sdam.WriteConcern
import dev.mooring.sdam.mongoClusterSettings
import dev.mooring.sdam.toConnectionString
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.assertions.withClue
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.shouldNotBe
import io.kotest.matchers.string.shouldNotContain
import io.kotest.matchers.types.shouldNotBeInstanceOf

class MongoClusterSettingsDslSpec : FunSpec({
    test("the DSL and a URI configure equal settings") {
        val fromDsl = mongoClusterSettings {
            hosts("a.example.com", "b.example.com:27018")
            replicaSet = "rs0"
            readPreference = ReadPreference(ReadPreferenceMode.NEAREST, listOf(mapOf("dc" to "ny")))
            writeConcern = WriteConcern(WriteAcknowledgement.MAJORITY, 100, true)
            serverMonitoringMode = ServerMonitoringMode.STREAM
            pool {
                maxPoolSize = 5
                minPoolSize = 1
            }
            connection {
                appName = "app"
                compressors = listOf("zlib")
            }
            tls { enabled = true }
            credential("alice", "pw".toCharArray(), source = "admin")
        }
        val fromUri = MongoClusterSettings.fromUri(
            "mongodb://alice:pw@a.example.com,b.example.com:27018/?replicaSet=rs0&readPreference=nearest&readPreferenceTags=dc:ny" +
                "&w=majority&wTimeoutMS=100&journal=true&serverMonitoringMode=stream&maxPoolSize=5&minPoolSize=1&appname=app" +
                "&compressors=zlib&tls=true",
        )
        fromDsl shouldBe fromUri
    }

    test("the DSL is validated like a URI, with InvalidSettingsException") {
        val cases: List<MongoClusterSettingsBuilderBlock> = listOf(
            { hosts("a", "b"); directConnection = true },
            { loadBalanced = true; replicaSet = "rs" },
            { hosts("a", "b"); loadBalanced = true },
            { srvMaxHosts = 2 },
            { srvServiceName = "custom" },
            { srvHost = "c.example.com"; directConnection = true },
            { heartbeatFrequencyMS = 100 },
            { serverSelectionTimeoutMS = 0 },
            { credential("alice", null, mechanism = "PLAIN") },
            { credential(null, null, mechanism = "MONGODB-OIDC") },
            { credential("u", "p".toCharArray(), mechanism = "MONGODB-X509") },
            { credential(null, null, mechanism = "GSSAPI") },
            { credential("u", "p".toCharArray(), mechanism = "NOPE") },
            { pool { minPoolSize = 10; maxPoolSize = 5 } },
            { connection { compressors = listOf("lz4") } },
            { connection { eventLoopThreads = 0 } },
            { connection { eventLoopThreads = 17 } },
            { hosts = emptyList() },
        )
        for ((i, block) in cases.withIndex()) {
            val e = withClue("case $i") { shouldThrow<InvalidSettingsException> { mongoClusterSettings(block) } }
            e.shouldNotBeInstanceOf<InvalidConnectionStringException>()
        }
    }

    test("connection { } keeps what it does not set: eventLoopThreads and a connection-level proxy") {
        val proxy = ProxySettings("proxy.example.com", 1080)
        val base = mongoClusterSettings { connection { eventLoopThreads = 1 } }
        base.connection.eventLoopThreads shouldBe 1
        val s = mongoClusterSettings {
            applySettings(base.copy(connection = base.connection.copy(proxy = proxy)))
            connection { appName = "later" }
        }
        s.connection.eventLoopThreads shouldBe 1
        s.connection.proxy shouldBe proxy
        s.connection.appName shouldBe "later"
    }

    test("applySettings keeps every field, driverInfo included") {
        val info = DriverInfo("wrapper", "1.0", "jvm")
        val base = mongoClusterSettings { hosts("h1"); driverInfo = listOf(info); connection { eventLoopThreads = 1 } }
        base.driverInfo shouldBe listOf(info)
        mongoClusterSettings { applySettings(base) } shouldBe base
    }

    test("later statements win: URI options over DSL values and DSL values over URI options") {
        val s = mongoClusterSettings {
            pool { maxPoolSize = 7 }
            replicaSet = "fromDsl"
            applyConnectionString("mongodb://h1,h2/?replicaSet=fromUri")
            localThresholdMS = 40
        }
        s.pool.maxPoolSize shouldBe 7
        s.replicaSet shouldBe "fromUri"
        s.hosts shouldBe listOf(ServerAddress("h1"), ServerAddress("h2"))
        s.localThresholdMS shouldBe 40L
        shouldThrow<InvalidConnectionStringException> { mongoClusterSettings { applyConnectionString("mongodb://h/?w") } }
    }

    test("an SRV name without explicit hosts leaves the seed list to SRV resolution") {
        val s = mongoClusterSettings { srvHost = "c.example.com" }
        s.hosts shouldBe emptyList()
        s shouldBe MongoClusterSettings.fromUri("mongodb+srv://c.example.com/?tls=false")
        mongoClusterSettings { srvHost = "c.example.com"; hosts("a:1") }.hosts shouldBe listOf(ServerAddress("a", 1))
        mongoClusterSettings { applySettings(s) } shouldBe s
    }

    test("credential defaults in the DSL follow auth.md") {
        mongoClusterSettings { credential("u", "p".toCharArray()) }.connection.credential!!.source shouldBe "admin"
        mongoClusterSettings { credential("u", "p".toCharArray(), mechanism = "PLAIN") }.connection.credential!!.source shouldBe "\$external"
        val g = mongoClusterSettings { credential("u@R", null, mechanism = "GSSAPI") }.connection.credential!!
        g.source shouldBe "\$external"
        g.mechanismProperties shouldBe mapOf("SERVICE_NAME" to "mongodb")
    }

    test("settings round-trip through toConnectionString") {
        val samples = listOf(
            mongoClusterSettings { hosts("a", "[::1]:27018", "/tmp/mongodb-27017.sock") },
            mongoClusterSettings {
                hosts("db.example.com:27020")
                directConnection = true
                readPreference = ReadPreference(ReadPreferenceMode.SECONDARY, listOf(mapOf("dc" to "ny", "rack" to "1"), emptyMap()), 120)
                writeConcern = WriteConcern(WriteAcknowledgement.Nodes(2), 0, false)
                timeoutMS = 0
                tls { insecure = true; enabled = true }
                credential("us:er@x", "p@ss:w/rd%".toCharArray(), source = "db")
                pool { maxPoolSize = 0; maxConnecting = 4; waitQueueTimeoutMS = 5 }
                proxy("proxy.example.com", 1081, "pu", "ppw")
                readConcernLevel = "local"
            },
            mongoClusterSettings { applyConnectionString("mongodb+srv://c.example.com/?srvMaxHosts=2&srvServiceName=svc&tls=false") },
            mongoClusterSettings {
                hosts("lb.example.com")
                loadBalanced = true
                credential(null, null, mechanism = "MONGODB-OIDC", mechanismProperties = mapOf("ENVIRONMENT" to "k8s"))
                connection { compressors = listOf("zstd", "zlib"); zlibCompressionLevel = 9; appName = "a p&p" }
                tls { caFile = "/etc/ca.pem"; certificateKeyFile = "/etc/k.pem"; certificateKeyFilePassword = "kpw" }
            },
        )
        for (s in samples) {
            MongoClusterSettings.fromUri(s.toConnectionString(includePasswords = true)) shouldBe s
        }
    }

    test("toConnectionString without passwords leaves every password out") {
        val s = mongoClusterSettings {
            credential("alice", "s3cr3tPw".toCharArray())
            tls { certificateKeyFilePassword = "keyPw9" }
            proxy("p", 1080, "pu", "proxyPw7")
        }
        val text = s.toConnectionString()
        text shouldNotContain "s3cr3tPw"
        text shouldNotContain "keyPw9"
        text shouldNotContain "proxyPw7"
        s.toString() shouldNotContain "s3cr3tPw"
        s.toString() shouldNotContain "proxyPw7"
        s.copy(retryReads = false) shouldNotBe s
    }

    test("credentials compare by content and hide the password") {
        val a = MongoCredential(null, "u", "admin", "pw".toCharArray())
        a shouldBe MongoCredential(null, "u", "admin", "pw".toCharArray())
        a.toString() shouldNotContain "pw,"
    }
})

private typealias MongoClusterSettingsBuilderBlock = dev.mooring.sdam.MongoClusterSettingsBuilder.() -> Unit
