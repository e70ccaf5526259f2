package dev.mooring.spec

import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.int
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import java.nio.file.Files

class SpecReportSpec : FunSpec({
    fun read(p: java.nio.file.Path): JsonObject = Json.parseToJsonElement(Files.readString(p)).jsonObject
    fun JsonObject.n(key: String) = this[key]!!.jsonPrimitive.int

    test("a run replaces the entries of the files it ran and keeps the other files' entries of an earlier run, per suite and per file") {
        val dir = Files.createTempDirectory("spec-report")
        val target = dir.resolve("spec-report.json")
        try {
            SpecReportWriter(target, "run-1").apply {
                passed("transactions", "commit.json", "a")
                passed("transactions", "commit.json", "b")
                skipped("transactions", "abort.json", "c", "needs x")
                failed("transactions", "README.md", "prose 1", "boom")
                passed("crud", "find.json", "d")
            }
            // a targeted run of the prose spec alone: only README.md of transactions is run again
            SpecReportWriter(target, "run-2").apply {
                passed("transactions", "README.md", "prose 1")
                passed("transactions", "README.md", "prose 2")
            }
            val report = read(target)
            val txn = report["transactions"]!!.jsonObject
            txn.n("total") shouldBe 5
            txn.n("passed") shouldBe 4
            txn.n("failed") shouldBe 0
            txn.n("skipped") shouldBe 1
            (txn["failures"] as JsonArray).size shouldBe 0
            (txn["skips"] as JsonArray).size shouldBe 1
            val files = txn["files"]!!.jsonObject
            files["commit.json"]!!.jsonObject["ranAt"]!!.jsonPrimitive.content shouldBe "run-1"
            files["README.md"]!!.jsonObject["ranAt"]!!.jsonPrimitive.content shouldBe "run-2"
            files["README.md"]!!.jsonObject.n("passed") shouldBe 2
            report["crud"]!!.jsonObject.n("total") shouldBe 1
        } finally {
            dir.toFile().deleteRecursively()
        }
    }

    test("a row of the earlier, per-suite format is dropped rather than mixed with per-file rows") {
        val dir = Files.createTempDirectory("spec-report")
        val target = dir.resolve("spec-report.json")
        try {
            Files.writeString(target, """{"crud": {"total": 9, "passed": 9, "failed": 0, "skipped": 0, "failures": [], "skips": []}}""")
            SpecReportWriter(target, "run-1").passed("sessions", "a.json", "t")
            val report = read(target)
            report.keys shouldBe setOf("sessions")
        } finally {
            dir.toFile().deleteRecursively()
        }
    }
})
