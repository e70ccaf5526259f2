package dev.mooring.bench.report

import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import java.nio.file.Files
import java.nio.file.Path
import java.nio.file.StandardCopyOption

/** Writes and reads `bench-report.json`: a JSON array with one object per row. */
object ReportWriter {
    private val json = Json { prettyPrint = true }

    fun encode(rows: List<BenchRow>): String = json.encodeToString(JsonArray.serializer(), JsonArray(rows.map { it.toJson() }))

    fun decode(text: String): List<BenchRow> {
        val element = Json.parseToJsonElement(text)
        require(element is JsonArray) { "a bench report is a JSON array" }
        return element.jsonArray.map { BenchRow.fromJson(it.jsonObject) }
    }

    /** Writes atomically (temp file + move), creating the parent directory. */
    fun write(path: Path, rows: List<BenchRow>) {
        path.toAbsolutePath().parent?.let { Files.createDirectories(it) }
        val tmp = path.resolveSibling(path.fileName.toString() + ".tmp")
        Files.writeString(tmp, encode(rows) + "\n")
        Files.move(tmp, path, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE)
    }
}
