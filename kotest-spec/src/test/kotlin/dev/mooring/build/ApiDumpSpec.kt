package dev.mooring.build

import dev.mooring.cmap.ConnectionPool
import dev.mooring.events.EventBus
import dev.mooring.java.MongoClusters
import dev.mooring.sdam.MongoCluster
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.ints.shouldBeGreaterThan
import org.jetbrains.kotlin.abi.tools.api.AbiFilters
import org.jetbrains.kotlin.abi.tools.api.AbiToolsFactory
import java.io.File
import java.nio.file.Files
import java.util.ServiceLoader
import java.util.zip.ZipFile

/**
 * The public API of each published module is the one committed in `<module>/api/<artifactId>.api`
 * (the kotlinx binary-compatibility-validator format, written by Kotlin's ABI tools from the
 * compiled classes: public and protected declarations with their JVM signatures; `internal`
 * declarations and `internal` packages are left out). A change of the API fails
 * this spec with the difference, so every API change shows in review as a change of a dump.
 *
 * After an intended change, write the dumps again and commit them:
 *
 *     mvn -B -ntp clean verify -pl kotest-spec -am -Papi-dump
 *
 * (`clean`: the dump is read from the compiled classes, and the Kotlin compiler leaves the class
 * files of a deleted source in `target/classes`.)
 */
class ApiDumpSpec : FunSpec({
    val root = File(System.getProperty("mooring.root") ?: "..").canonicalFile
    val update = System.getProperty("api.dump").let { it != null && it != "false" }
    val tools = ServiceLoader.load(AbiToolsFactory::class.java).first().get()

    for ((module, marker) in PUBLISHED) {
        test("the public API of $module is its committed dump api/$module.api") {
            val location = File(marker.protectionDomain.codeSource.location.toURI())
            val classFiles = classFiles(location)
            classFiles.size shouldBeGreaterThan 10 // the module's classes were found
            val actual = buildString { tools.v2.printJvmDump(this, classFiles, FILTERS) }
            val dump = root.resolve("${module.removePrefix("mooring-")}/api/$module.api")
            if (update) {
                dump.parentFile.mkdirs()
                dump.writeText(actual)
            } else {
                val expected = if (dump.isFile) dump.readText() else ""
                if (expected != actual) {
                    val built = Files.createTempFile(module, ".api").toFile().apply { writeText(actual) }
                    val diff = tools.filesDiff(dump.takeIf { it.isFile } ?: Files.createTempFile(module, ".none").toFile(), built)
                    throw AssertionError(
                        "The public API of $module differs from ${dump.relativeTo(root)} (- committed, + built):\n$diff\n" +
                            "If the change is intended, update the dumps (mvn -B -ntp clean verify -pl kotest-spec -am -Papi-dump) and " +
                            "commit them. A class whose source was deleted is still in target/classes until a clean build.",
                    )
                }
            }
        }
    }
})

/** The published modules (those without `mooring.publish.skip`) and one class of each, to find its classes. */
private val PUBLISHED = listOf(
    "mooring-events" to EventBus::class.java,
    "mooring-cmap" to ConnectionPool::class.java,
    "mooring-sdam" to MongoCluster::class.java,
    "mooring-driver" to dev.mooring.driver.MongoCollection::class.java,
    "mooring-java" to MongoClusters::class.java,
)

/**
 * Not API: `internal` packages (ArchitectureSpec holds them to `internal` declarations and the
 * `@InternalMooringApi` opt-ins, which are public for Mooring's other modules only, companions included).
 */
private val FILTERS = AbiFilters(emptySet(), setOf("dev.mooring.**.internal.**"), emptySet(), setOf("dev.mooring.events.InternalMooringApi"))

/** The class files of a module: its `target/classes` in a reactor build, else its jar (unpacked). */
private fun classFiles(location: File): List<File> {
    val dir = if (location.isDirectory) {
        location
    } else {
        val out = Files.createTempDirectory("api-dump").toFile()
        ZipFile(location).use { zip ->
            for (e in zip.entries()) {
                if (e.isDirectory || !e.name.endsWith(".class")) continue
                val f = out.resolve(e.name)
                f.parentFile.mkdirs()
                zip.getInputStream(e).use { input -> f.outputStream().use { input.copyTo(it) } }
            }
        }
        out
    }
    return dir.walkTopDown().filter { it.isFile && it.name.endsWith(".class") }.sortedBy { it.path }.toList()
}
