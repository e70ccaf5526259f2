package dev.mooring.testkit

import java.io.File

/**
 * Where the official JSON spec tests are, and the project root the spec runners report under.
 *
 * The corpus root comes from the system property `spec.tests.dir`, else the environment
 * variable `SPEC_TESTS_DIR`, else `../shared/spec-tests` relative to the project root.
 * The spec runners' report writer ([dev.mooring.spec.SpecReport], in kotest-spec's tests)
 * writes below [projectRoot]. Stateless apart from the lazily resolved [root]; thread-safe.
 */
object SpecTests {
    /** The root folder of the spec-test corpus. */
    val root: File by lazy {
        val configured = System.getProperty("spec.tests.dir") ?: System.getenv("SPEC_TESTS_DIR")
        val f = if (configured != null) File(configured) else File(projectRoot(), "../shared/spec-tests")
        f.canonicalFile
    }

    /** Every `*.json` file below [suite] (a folder relative to [root]), sorted by path. */
    fun files(suite: String): List<File> {
        val dir = File(root, suite)
        if (!dir.isDirectory) return emptyList()
        return dir.walkTopDown().filter { it.isFile && it.name.endsWith(".json") }.sortedBy { it.path }.toList()
    }

    /** The file's path relative to the suite folder, as reported. */
    fun relative(suite: String, file: File): String = File(root, suite).toPath().relativize(file.toPath()).toString()

    /** The Maven project root: the first ancestor of the working directory holding `.ci` or the root pom with modules. */
    fun projectRoot(): File {
        var d: File? = File("").absoluteFile
        while (d != null) {
            if (File(d, ".ci").isDirectory || File(d, "kotest-spec").isDirectory) return d
            d = d.parentFile
        }
        return File("").absoluteFile
    }
}
