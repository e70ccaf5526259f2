package dev.mooring.sdam.uri

import dev.mooring.events.ServerAddress
import dev.mooring.sdam.ConnectionString
import dev.mooring.sdam.InvalidConnectionStringException
import dev.mooring.sdam.InvalidSettingsException
import dev.mooring.sdam.ReadPreferenceMode
import dev.mooring.sdam.ServerMonitoringMode
import dev.mooring.sdam.WriteAcknowledgement
import dev.mooring.sdam.mongoClusterSettings
import io.kotest.assertions.throwables.shouldThrow
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldBeEmpty
import io.kotest.matchers.collections.shouldContainExactly
import io.kotest.matchers.collections.shouldHaveSize
import io.kotest.matchers.collections.shouldNotBeEmpty
import io.kotest.matchers.nulls.shouldBeNull
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldContain
import io.kotest.matchers.string.shouldNotContain

class ConnectionStringSpec : FunSpec({
    test("toString, settings and credential never show passwords") {
        val cs = ConnectionString.parse(
            "mongodb://alice:s3cr3tPw@db1.example.com/app?tlsCertificateKeyFilePassword=keyPw9&proxyHost=p.example.com" +
                "&proxyUsername=pu&proxyPassword=proxyPw7",
        )
        cs.hasPassword shouldBe true
        for (text in listOf(cs.toString(), cs.settings.toString(), cs.credential.toString(), cs.settings.connection.toString())) {
            text shouldNotContain "s3cr3tPw"
            text shouldNotContain "keyPw9"
            text shouldNotContain "proxyPw7"
        }
        cs.toString() shouldContain "alice"
        cs.toString() shouldContain "db1.example.com"
        String(cs.credential!!.password!!) shouldBe "s3cr3tPw"
        val encodedKey = ConnectionString.parse("mongodb://h/?tlsCertificateKeyFile%50assword=keyPw9&sslPEMKeyPassword=oldPw3")
        encodedKey.settings.connection.tls.certificateKeyFilePassword shouldBe "keyPw9"
        encodedKey.toString() shouldNotContain "keyPw9"
        encodedKey.toString() shouldNotContain "oldPw3"
        cs.settings.proxy!!.password shouldBe "proxyPw7"
    }

    test("error messages never contain the password, however it is malformed") {
        val bad = listOf(
            "mongodb://alice:s3cr3tPw:x@host",
            "mongodb://alice:s3cr3tPw%zz@host",
            "mongodb://alice:s3cr3tPw%e@host",
            "mongodb://alice:s3/cr3tPw@host/db",
            "mongodb://alice:s3?cr3tPw@host/db",
            "mongodb://alice:s3cr3tPw@host:99999",
            "mongodb://alice:s3cr3tPw@host/?authMechanism=MONGODB-X509",
            "mongodb://alice:s3cr3tPw@host/?authMechanism=MONGODB-AWS",
            "mongodb://alice:s3cr3tPw@host/?authMechanism=MONGODB-OIDC&authMechanismProperties=ENVIRONMENT:test",
            "mongodb+srv://alice:s3cr3tPw@a.example.com,b.example.com",
            "mongodb://alice:s3cr3tPw@a,b/?directConnection=true",
            "mongodb://alice:s3cr3tPw@host/?tlsCertificateKeyFilePassword=%zzkeyPw",
            "mongodb://alice:s3[cr3tPw@host",
        )
        for (uri in bad) {
            val e = shouldThrow<InvalidConnectionStringException> { ConnectionString.parse(uri) }
            e.message shouldNotContain "cr3tPw"
            e.message shouldNotContain "keyPw"
        }
    }

    test("hosts: names, IPv6 literals, ports and percent-encoded Unix sockets") {
        val cs = ConnectionString.parse("mongodb://Example.COM,[::1]:27018,%2Ftmp%2Fm.sock,rel%2Fa.sock,10.0.0.1:1")
        cs.hosts shouldContainExactly listOf(
            ServerAddress("example.com"), ServerAddress("::1", 27018), ServerAddress.unixSocket("/tmp/m.sock"),
            ServerAddress.unixSocket("rel/a.sock"), ServerAddress("10.0.0.1", 1),
        )
        shouldThrow<InvalidConnectionStringException> { ConnectionString.parse("mongodb://%2Ftmp%2Fnot-a-socket") }
        shouldThrow<InvalidConnectionStringException> { ConnectionString.parse("mongodb:///tmp/m.sock") }
            .message shouldContain "URL encoded"
        shouldThrow<InvalidConnectionStringException> { ConnectionString.parse("mongodb://a,,b") }
        shouldThrow<InvalidConnectionStringException> { ConnectionString.parse("mongodb://::1") }
    }

    test("the slash before the options is optional and the database is decoded and checked") {
        val cs = ConnectionString.parse("mongodb://host?replicaSet=rs")
        cs.database.shouldBeNull()
        cs.settings.replicaSet shouldBe "rs"
        ConnectionString.parse("mongodb://host/admin%3F?w=1").database shouldBe "admin?"
        ConnectionString.parse("mongodb://host/db.coll").database shouldBe "db.coll"
        for (db in listOf("a%2Fb", "a%20b", "a%24b", "a%22b", "a%5Cb")) {
            shouldThrow<InvalidConnectionStringException> { ConnectionString.parse("mongodb://host/$db") }.message shouldContain "database"
        }
    }

    test("unknown keys, invalid values, repeats and deprecated keys are warnings; keys are case-insensitive") {
        val cs = ConnectionString.parse(
            "mongodb://host/?FOO=1&maxPoolSize=x&MAXCONNECTING=3&replicaSet=a&replicaset=b&j=true&wtimeout=5&connectTimeoutMS=",
        )
        cs.warnings shouldHaveSize 6
        cs.options["foo"] shouldBe listOf("1")
        cs.options["replicaset"] shouldBe listOf("a", "b")
        cs.typedOptions["maxConnecting"] shouldBe 3
        cs.settings.pool.maxConnecting shouldBe 3
        cs.settings.pool.maxPoolSize shouldBe 100
        cs.settings.replicaSet shouldBe "b"
        cs.settings.writeConcern.journal shouldBe true
        cs.settings.writeConcern.wTimeoutMS shouldBe 5L
        cs.settings.connection.connectTimeoutMS shouldBe 10_000L
    }

    test("a deprecated key is ignored when its replacement is present") {
        val cs = ConnectionString.parse("mongodb://host/?wtimeout=5&wTimeoutMS=10&j=false&journal=true")
        cs.settings.writeConcern.wTimeoutMS shouldBe 10L
        cs.settings.writeConcern.journal shouldBe true
        cs.warnings shouldHaveSize 2
    }

    test("readPreferenceTags accumulate in order, an empty value is the empty tag set") {
        val rp = ConnectionString.parse(
            "mongodb://host/?readPreference=secondary&readPreferenceTags=dc:ny,rack:1&readPreferenceTags=dc:sf&readPreferenceTags=",
        ).settings.readPreference
        rp.mode shouldBe ReadPreferenceMode.SECONDARY
        rp.tagSets shouldBe listOf(mapOf("dc" to "ny", "rack" to "1"), mapOf("dc" to "sf"), emptyMap())
    }

    test("read preference rules: primary takes no tags and no positive maxStalenessSeconds") {
        shouldThrow<InvalidConnectionStringException> { ConnectionString.parse("mongodb://host/?readPreferenceTags=dc:ny") }
        shouldThrow<InvalidConnectionStringException> { ConnectionString.parse("mongodb://host/?maxStalenessSeconds=120") }
        shouldThrow<InvalidConnectionStringException> {
            ConnectionString.parse("mongodb://host/?readPreference=primary&maxStalenessSeconds=120")
        }.message shouldContain "maxStalenessSeconds"
        ConnectionString.parse("mongodb://host/?maxStalenessSeconds=-1").settings.readPreference.maxStalenessSeconds.shouldBeNull()
        ConnectionString.parse("mongodb://host/?readPreference=nearest&maxStalenessSeconds=-1")
            .settings.readPreference.maxStalenessSeconds shouldBe -1L
        ConnectionString.parse("mongodb://host/?slaveOk=true").settings.readPreference.mode shouldBe ReadPreferenceMode.SECONDARY_PREFERRED
    }

    test("cross-option rules are errors") {
        val bad = listOf(
            "mongodb://a,b/?directConnection=true",
            "mongodb+srv://a.example.com/?directConnection=true",
            "mongodb://a,b/?loadBalanced=true",
            "mongodb://a/?loadBalanced=true&replicaSet=rs",
            "mongodb://a/?loadBalanced=true&directConnection=true",
            "mongodb://a/?srvServiceName=x",
            "mongodb://a/?srvMaxHosts=0",
            "mongodb+srv://a.example.com/?srvMaxHosts=1&replicaSet=rs",
            "mongodb+srv://a.example.com:27017",
            "mongodb+srv://a.example.com,b.example.com",
            "mongodb://a/?tls=true&ssl=false",
            "mongodb://a/?tlsInsecure=true&tlsAllowInvalidHostnames=false",
            "mongodb://a/?minPoolSize=10&maxPoolSize=5",
            "mongodb://a/?w=0&journal=true",
            "mongodb://a/?proxyPort=1080",
            "mongodb://a/?proxyHost=p&proxyUsername=u",
            "mongodb://a/?proxyHost=p&proxyHost=q",
            "mongodb://a/?authSource=",
            "mongodb://a/?authMechanism=NOPE",
            "mongodb://a/?w",
        )
        for (uri in bad) shouldThrow<InvalidConnectionStringException> { ConnectionString.parse(uri) }
    }

    test("socks5.md: a zero-length proxyUsername or proxyPassword is ignored, in the URI and in the settings") {
        // ignored options: no authentication, no error
        for (uri in listOf(
            "mongodb://a/?proxyHost=p&proxyPassword=",
            "mongodb://a/?proxyHost=p&proxyUsername=",
            "mongodb://a/?proxyHost=p&proxyUsername=&proxyPassword=",
        )) {
            val cs = ConnectionString.parse(uri)
            val proxy = cs.settings.proxy!!
            proxy.host shouldBe "p"
            proxy.username.shouldBeNull()
            proxy.password.shouldBeNull()
            cs.warnings.shouldNotBeEmpty()
        }
        // once ignored, the other one stands alone: an error
        shouldThrow<InvalidConnectionStringException> { ConnectionString.parse("mongodb://a/?proxyHost=p&proxyUsername=u&proxyPassword=") }
        shouldThrow<InvalidConnectionStringException> { ConnectionString.parse("mongodb://a/?proxyHost=p&proxyUsername=&proxyPassword=pw") }
        // the equivalent MongoClient options
        val dsl = mongoClusterSettings { proxy("p", 1080, "", "") }.proxy!!
        dsl.username.shouldBeNull()
        dsl.password.shouldBeNull()
        shouldThrow<InvalidSettingsException> { mongoClusterSettings { proxy("p", 1080, "u", "") } }
        shouldThrow<InvalidSettingsException> { mongoClusterSettings { proxy("p", 1080, "", "pw") } }
    }

    test("socks5.md: proxyPort without proxyHost is an error even when its value is invalid (it was specified)") {
        for (uri in listOf("mongodb://a/?proxyPort=abc", "mongodb://a/?proxyPort=0", "mongodb://a/?proxyPort=", "mongodb://a/?proxyHost=&proxyPort=1080")) {
            shouldThrow<InvalidConnectionStringException> { ConnectionString.parse(uri) }.message!! shouldContain "proxyHost"
        }
        // with proxyHost, an invalid port is ignored with a warning (the default 1080 applies)
        val cs = ConnectionString.parse("mongodb://a/?proxyHost=p&proxyPort=abc")
        cs.settings.proxy!!.port shouldBe 1080
        cs.warnings.shouldNotBeEmpty()
    }

    test("mongodb+srv: one host, no port, TLS on unless tls=false, SRV options kept") {
        val cs = ConnectionString.parse("mongodb+srv://Cluster0.Example.com/?srvServiceName=custom&srvMaxHosts=3")
        cs.isSrv shouldBe true
        cs.srvHost shouldBe "cluster0.example.com"
        cs.hosts shouldBe listOf(ServerAddress("cluster0.example.com"))
        val s = cs.settings
        s.srvHost shouldBe "cluster0.example.com"
        s.hosts.shouldBeEmpty()
        s.srvServiceName shouldBe "custom"
        s.srvMaxHosts shouldBe 3
        s.connection.tls.enabled shouldBe true
        ConnectionString.parse("mongodb+srv://c.example.com/?tls=false").settings.connection.tls.enabled shouldBe false
        ConnectionString.parse("mongodb+srv://c.example.com/?directConnection=false").settings.directConnection shouldBe false
    }

    test("typed options reach the settings") {
        val s = ConnectionString.parse(
            "mongodb://h/?appname=app&compressors=zstd,snappy,lz4&zlibCompressionLevel=3&serverMonitoringMode=poll" +
                "&heartbeatFrequencyMS=700&localThresholdMS=0&serverSelectionTimeoutMS=1000&timeoutMS=50&retryReads=false" +
                "&retryWrites=false&readConcernLevel=majority&w=majority&maxAdaptiveRetries=0&enableOverloadRetargeting=true" +
                "&waitQueueTimeoutMS=9&maxIdleTimeMS=8&socketTimeoutMS=7&tlsInsecure=true&tlsCAFile=ca.pem",
        ).settings
        s.connection.appName shouldBe "app"
        s.connection.compressors shouldBe listOf("zstd", "snappy")
        s.connection.zlibCompressionLevel shouldBe 3
        s.serverMonitoringMode shouldBe ServerMonitoringMode.POLL
        s.heartbeatFrequencyMS shouldBe 700L
        s.localThresholdMS shouldBe 0L
        s.serverSelectionTimeoutMS shouldBe 1000L
        s.timeoutMS shouldBe 50L
        s.retryReads shouldBe false
        s.retryWrites shouldBe false
        s.readConcernLevel shouldBe "majority"
        s.writeConcern.w shouldBe WriteAcknowledgement.MAJORITY
        s.maxAdaptiveRetries shouldBe 0
        s.enableOverloadRetargeting shouldBe true
        s.pool.waitQueueTimeoutMS shouldBe 9L
        s.pool.maxIdleTimeMS shouldBe 8L
        s.connection.socketTimeoutMS shouldBe 7L
        s.connection.tls.allowInvalidCertificates shouldBe true
        s.connection.tls.allowInvalidHostnames shouldBe true
        s.connection.tls.disableOcspEndpointCheck shouldBe true
        s.connection.tls.caFile shouldBe "ca.pem"
    }

    test("credentials: defaults per mechanism, GSSAPI service name alias, key-value values with ':'") {
        ConnectionString.parse("mongodb://u:p@h/db").credential!!.source shouldBe "db"
        ConnectionString.parse("mongodb://u:p@h").credential!!.source shouldBe "admin"
        ConnectionString.parse("mongodb://u:p@h/db?authMechanism=plain").credential!!.mechanism shouldBe "PLAIN"
        ConnectionString.parse("mongodb://h/db?authSource=other").credential.shouldBeNull()
        val g = ConnectionString.parse("mongodb://u%40R@h/?authMechanism=GSSAPI&gssapiServiceName=svc").credential!!
        g.username shouldBe "u@R"
        g.mechanismProperties shouldBe mapOf("SERVICE_NAME" to "svc")
        val o = ConnectionString.parse(
            "mongodb://h/?authMechanism=MONGODB-OIDC&authMechanismProperties=environment:azure,TOKEN_RESOURCE:api://x:1",
        ).credential!!
        o.mechanismProperties shouldBe mapOf("ENVIRONMENT" to "azure", "TOKEN_RESOURCE" to "api://x:1")
        shouldThrow<InvalidConnectionStringException> {
            ConnectionString.parse("mongodb://h/?authMechanism=MONGODB-OIDC&authMechanismProperties=ENVIRONMENT:test,ALLOWED_HOSTS:x")
        }
    }

    test("a ',' inside an authMechanismProperties value is kept with a warning") {
        val cs = ConnectionString.parse(
            "mongodb://h/?authMechanism=MONGODB-OIDC&authMechanismProperties=TOKEN_RESOURCE:a%2Cb,ENVIRONMENT:gcp",
        )
        cs.credential!!.mechanismProperties shouldBe mapOf("TOKEN_RESOURCE" to "a,b", "ENVIRONMENT" to "gcp")
        cs.warnings shouldHaveSize 1
    }

    test("invalid inputs of every part are typed errors") {
        val bad = listOf(
            "", "mongodb:/h", "http://h", "mongodb://", "mongodb://h:0", "mongodb://h:65536", "mongodb://h:x", "mongodb://h:",
            "mongodb://[::1", "mongodb://[::1]x", "mongodb://[]", "mongodb://u@@h", "mongodb://u%g1@h", "mongodb://h/?a%zz=1",
            "mongodb://h/?=1", "mongodb://u\"@h",
        )
        for (uri in bad) shouldThrow<InvalidConnectionStringException> { ConnectionString.parse(uri) }
    }
})
