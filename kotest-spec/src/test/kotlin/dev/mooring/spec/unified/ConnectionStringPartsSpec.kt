package dev.mooring.spec.unified

import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe

/** How the external host derives its clients' connection strings from `MONGODB_URI`. */
class ConnectionStringPartsSpec : FunSpec({
    test("a test's URI options are appended, replacing the deployment's option of the same name") {
        val parts = ConnectionStringParts.parse("mongodb://u:p%40w@h1:27017,h2:27018/admin?replicaSet=rs0&w=1")
        parts.userInfo shouldBe "u:p%40w"
        parts.hosts shouldBe listOf("h1:27017", "h2:27018")
        parts.withOptions(mapOf("W" to "majority", "appname" to "x")).toString() shouldBe
            "mongodb://u:p%40w@h1:27017,h2:27018/admin?replicaSet=rs0&W=majority&appname=x"
    }

    test("a direct connection names one host, without replicaSet or loadBalanced") {
        val parts = ConnectionStringParts.parse("mongodb://h1,h2/?replicaSet=rs0&tls=true")
        parts.withHosts(listOf("h2")).withOptions(mapOf("directConnection" to "true"), remove = setOf("replicaSet", "loadBalanced")).toString() shouldBe
            "mongodb://h2/?tls=true&directConnection=true"
    }

    test("a URI without a path or options gets them as needed") {
        ConnectionStringParts.parse("mongodb://h1").withOptions(mapOf("retryWrites" to "false")).toString() shouldBe "mongodb://h1/?retryWrites=false"
        ConnectionStringParts.parse("mongodb://h1").userInfo shouldBe null
    }
})
