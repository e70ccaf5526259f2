package dev.mooring.build

import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import java.io.ByteArrayOutputStream
import java.io.File
import java.io.PrintStream
import java.nio.file.Files

/**
 * The driver's typed filters and updates (`dev.mooring.driver.query`) are checked by the Kotlin
 * compiler: a value of another type than the property's does not compile (`Movie::year eq "x"`
 * would otherwise infer `Any` and fail only when rendered). Compiles small sources with the
 * project's Kotlin compiler (kotlin-compiler-embeddable, on the test runtime classpath) against
 * this test's classpath: the well-typed one compiles, each line of the ill-typed one is an error.
 */
class TypedQueriesCompileSpec : FunSpec({
    timeout = 300_000

    val header = """
        import dev.mooring.driver.query.*
        class Movie(val title: String, val year: Int, val tags: List<String>, val director: Person?)
        class Person(val name: String)
    """.trimIndent()

    test("well-typed property filters and updates compile") {
        val (ok, out) = compile(
            header + "\n" + """
            fun filters() = listOf(Movie::year eq 2000, Movie::year gt 1999, Movie::title `in` listOf("a"), Movie::director eq null, path(Movie::year) ne 3,
                (Movie::director / Person::name) eq "Ada", Movie::tags all listOf("x"))
            fun updates() = update(set(Movie::title, "x"), inc(Movie::year, 1), push(Movie::tags, "t"), set(path(Movie::year), 1), pull(Movie::tags, "u"))
            """.trimIndent(),
        )
        withClue(out) { ok shouldBe true }
    }

    test("a value of another type than the property's is a compile error, for every value-taking builder") {
        val bad = listOf(
            "fun e1() = Movie::year eq \"x\"",
            "fun e2() = Movie::title ne 3",
            "fun e3() = Movie::year `in` listOf(\"x\")",
            "fun e4() = path(Movie::year) eq \"x\"",
            "fun e5() = (Movie::director / Person::name) nin listOf(1)",
            "fun e6() = set(Movie::title, 3)",
            "fun e7() = push(Movie::tags, 3)",
            "fun e8() = Movie::tags all listOf(1)",
            "fun e9() = Movie::year gt \"x\"",
        )
        val (ok, out) = compile(header + "\n" + bad.joinToString("\n"))
        ok shouldBe false
        val firstBadLine = header.lines().size + 1
        val errorLines = Regex("Typed\\.kt:(\\d+):\\d+: error").findAll(out).map { it.groupValues[1].toInt() }.toSet()
        withClue(out) { (bad.indices.map { firstBadLine + it } - errorLines) shouldBe emptyList() }
    }
})

private fun <R> withClue(clue: String, body: () -> R): R = io.kotest.assertions.withClue(clue) { body() }

/** Compiles [source] (as `Typed.kt`) against this JVM's classpath; true when it compiled, and the compiler's messages. */
private fun compile(source: String): Pair<Boolean, String> {
    val dir = Files.createTempDirectory("typed-queries").toFile()
    try {
        val file = File(dir, "Typed.kt").apply { writeText(source) }
        val compiler = Class.forName("org.jetbrains.kotlin.cli.jvm.K2JVMCompiler").getDeclaredConstructor().newInstance()
        val exec = compiler.javaClass.getMethod("exec", PrintStream::class.java, Array<String>::class.java)
        val out = ByteArrayOutputStream()
        val args = arrayOf(
            "-no-stdlib", "-no-reflect", "-jvm-target", "17", "-classpath", System.getProperty("java.class.path"),
            "-d", File(dir, "out").path, file.path,
        )
        val exitCode = PrintStream(out, true).use { exec.invoke(compiler, it, args) }
        return (exitCode.toString() == "OK") to out.toString()
    } finally {
        dir.deleteRecursively()
    }
}
