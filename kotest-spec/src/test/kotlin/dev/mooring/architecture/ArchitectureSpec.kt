package dev.mooring.architecture

import com.lemonappdev.konsist.api.Konsist
import com.lemonappdev.konsist.api.container.KoScope
import com.lemonappdev.konsist.api.declaration.KoBaseDeclaration
import com.lemonappdev.konsist.api.declaration.KoFileDeclaration
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.ints.shouldBeGreaterThan
import org.jetbrains.kotlin.psi.KtClassOrObject
import java.io.File

/**
 * The rules of this codebase (docs/architecture.md "Architecture rules"), read from the library's
 * sources with Konsist (parsed, not compiled: the rules see the code as written). Each test
 * lists every violation it finds; a list kept below as a baseline names the known exceptions,
 * and a baseline entry that no longer applies fails too, so the lists only shrink.
 */
class ArchitectureSpec : FunSpec({
    val root = File(System.getProperty("mooring.root") ?: "..").canonicalFile
    val library: KoScope = Konsist.scopeFromExternalDirectories(LIBRARY_MODULES.map { root.resolve("$it/src/main/kotlin").path })
    val libraryFiles = library.files.toList()
    val classes by lazy { library.classes(includeNested = true, includeLocal = true) }
    val parentsOf: Map<String, List<String>> by lazy { classes.associate { c -> c.name to c.parentNames() } }

    test("the library sources were found") {
        libraryFiles.size shouldBeGreaterThan 200
    }

    test("declarations in internal packages are internal or private, except the listed @InternalMooringApi opt-ins") {
        val violations = ArrayList<String>()
        val optIns = HashSet<String>()
        for (file in libraryFiles.filter { it.isInInternalPackage() }) {
            for (d in file.topLevelDeclarations()) {
                val name = "${file.packagee?.name}.${d.name}"
                if (d.optedIn) optIns += name
                if (!d.internalOrPrivate && !d.optedIn) violations += "${d.location}: ${d.name} is public in an internal package"
            }
        }
        violations.shouldListNone()
        // Every opt-in is public API in all but name: adding one is a decision reviewed here.
        (optIns - INTERNAL_API_OPT_INS).map { "$it is @InternalMooringApi but not listed in INTERNAL_API_OPT_INS" }.shouldListNone()
        (INTERNAL_API_OPT_INS - optIns).map { "$it is listed in INTERNAL_API_OPT_INS but not @InternalMooringApi" }.shouldListNone()
    }

    test("every exception class extends MooringException") {
        val violations = ArrayList<String>()
        for (c in classes) {
            if (c.name == ROOT_EXCEPTION || c.name in EXCEPTION_CARRIERS) continue
            val ancestors = ancestors(c.name, parentsOf)
            if (ROOT_EXCEPTION !in ancestors && ancestors.any { it.isThrowableName() }) {
                violations += "${c.location}: ${c.name} is an exception that does not extend $ROOT_EXCEPTION"
            }
        }
        violations.shouldListNone()
        (EXCEPTION_CARRIERS - parentsOf.keys).map { "$it is listed in EXCEPTION_CARRIERS but no longer exists" }.shouldListNone()
    }

    test("one exception class per concept, and each family under its root") {
        val exceptions = classes.map { it.name }.filter { ROOT_EXCEPTION in ancestors(it, parentsOf) }
        exceptions.size shouldBeGreaterThan 20
        // MongoX and X name one error twice (as MongoIncompatibleServerException and IncompatibleServerException did)
        val violations = exceptions.groupBy { it.removePrefix("Mongo") }.filterValues { it.size > 1 }.values
            .map { "one concept, ${it.size} classes: ${it.joinToString()}" }.toMutableList()
        for ((family, root) in EXCEPTION_FAMILIES) {
            violations += exceptions.filter { family.matches(it) && it != root && root !in ancestors(it, parentsOf) }
                .map { "$it does not extend $root" }
        }
        violations.shouldListNone()
    }

    test("no library function returns and no library property holds a value typed Any") {
        val violations = ArrayList<String>()
        for (f in library.functions(includeNested = true, includeLocal = false)) {
            if (f.hasPrivateModifier) continue
            if (f.returnType?.text?.isAny() == true) violations += "${f.location}: fun ${f.name} returns ${f.returnType?.text}"
        }
        for (p in library.properties(includeNested = true)) {
            if (p.hasPrivateModifier) continue
            if (p.type?.text?.isAny() == true) violations += "${p.location}: ${p.name} is typed ${p.type?.text}"
        }
        violations.shouldListNone()
    }

    test("the test kit never imports dev.mooring.cmap (it speaks the wire protocol on its own)") {
        val testkit = Konsist.scopeFromExternalDirectories(listOf(root.resolve("testkit/src").path))
        testkit.files.size shouldBeGreaterThan 50
        testkit.files.flatMap { file -> file.imports.filter { it.name.startsWith("dev.mooring.cmap") }.map { "${file.path}: import ${it.name}" } }
            .shouldListNone()
    }

    test("no library source file is longer than $MAX_FILE_LINES lines (a baseline may only shrink)") {
        val lines = libraryFiles.associate { it.relativePath(root) to it.text.count { c -> c == '\n' } }
        lines.filter { (path, n) -> n > (OVERSIZED_FILES[path] ?: MAX_FILE_LINES) }
            .map { (path, n) -> "$path: $n lines (limit ${OVERSIZED_FILES[path] ?: MAX_FILE_LINES}); split it" }
            .shouldListNone()
        OVERSIZED_FILES.filter { (path, _) -> (lines[path] ?: 0) <= MAX_FILE_LINES }
            .map { (path, _) -> "$path is no longer above $MAX_FILE_LINES lines: remove it from OVERSIZED_FILES" }
            .shouldListNone()
        OVERSIZED_FILES.filter { (path, limit) -> (lines[path] ?: Int.MAX_VALUE) < limit }
            .map { (path, limit) -> "$path has ${lines[path]} lines: lower its OVERSIZED_FILES entry from $limit" }
            .shouldListNone()
    }

    test("no two library source files have the same name") {
        val shared = libraryFiles.groupBy { it.nameWithExtension }.filterValues { it.size > 1 }
        shared.filterKeys { it !in SHARED_FILE_NAMES }
            .map { (name, files) -> "$name: ${files.joinToString { it.relativePath(root) }}; name each for what it holds" }
            .shouldListNone()
        (SHARED_FILE_NAMES - shared.keys).map { "$it is no longer shared: remove it from SHARED_FILE_NAMES" }.shouldListNone()
    }

    test("a file of errors (named *Errors or *Exception) holds only exceptions and the types their properties use") {
        fun isException(name: String) = name == ROOT_EXCEPTION || ancestors(name, parentsOf).any { it.isThrowableName() }
        val errorFiles = libraryFiles.filter { it.name.endsWith("Errors") || it.name.endsWith("Exception") }
        errorFiles.size shouldBeGreaterThan 5
        errorFiles.flatMap { file ->
            val types = file.classes(includeNested = false) + file.interfaces(includeNested = false)
            val exceptionText = types.filter { isException(it.name) }.joinToString("\n") { it.text }
            types.filter { !isException(it.name) && !Regex("\\b${it.name}\\b").containsMatchIn(exceptionText) }
                .map { "${file.relativePath(root)}: ${it.name} is not an exception nor used by one; give it a file of its own" }
        }.shouldListNone()
    }

    test("one substantial class per file: a file holds at most one non-private class, object or interface above $MAX_COMPANION_LINES lines") {
        val violations = ArrayList<String>()
        for (file in libraryFiles) {
            val types = file.classesAndInterfacesAndObjects(includeNested = false, includeLocal = false).filter { !it.hasPrivateModifier }
            val families = types.map { it.name }.toSet()
            // a sealed family's branches share the file with their parent
            val large = types.filter { t -> t.text.count { it == '\n' } >= MAX_COMPANION_LINES && t.parentNames().none { it in families } }
            if (large.size > 1) violations += "${file.relativePath(root)}: ${large.joinToString { it.name }}; give each its own file"
        }
        violations.shouldListNone()
    }
})

/** The published library modules (their main source sets). */
private val LIBRARY_MODULES = listOf("events", "cmap", "sdam", "driver", "java")

private const val ROOT_EXCEPTION = "MooringException"

/**
 * Public only for Mooring's other modules (`@InternalMooringApi`, RequiresOptIn at level ERROR);
 * docs/architecture.md "Visibility" says who calls each.
 */
private val INTERNAL_API_OPT_INS = setOf(
    "dev.mooring.cmap.internal.auth.Reauthentication",
    "dev.mooring.cmap.internal.command.CommandMonitor",
    "dev.mooring.cmap.internal.command.MonitoredOperation",
    "dev.mooring.cmap.internal.command.CommandRedaction",
    "dev.mooring.cmap.internal.connection.ConnectionSettingsRules",
    "dev.mooring.cmap.internal.connection.DriverVersion",
    "dev.mooring.cmap.internal.connection.OperationSocketTimeout",
    "dev.mooring.sdam.internal.HelperCommand",
    "dev.mooring.driver.internal.CallerEncoding",
    "dev.mooring.cmap.internal.pool.CheckOutGuard",
    "dev.mooring.cmap.internal.wire.AppendedCommand",
    "dev.mooring.sdam.internal.cursor.CursorPage",
    "dev.mooring.sdam.internal.cursor.GetMoreDemand",
    "dev.mooring.sdam.internal.cursor.PageCursor",
    "dev.mooring.sdam.internal.tracing.CallerTracingContext",
)

/**
 * Exceptions that never leave the library: each is caught by its own type and translated into a
 * [ROOT_EXCEPTION] (or unwrapped) within the package that throws it. The list may only shrink.
 */
private val EXCEPTION_CARRIERS = setOf(
    // sdam: a cancellation cause must be a CancellationException (kotlinx.coroutines treats any other as a failure)
    "CursorCloseCancellation",
    "AuthFailure", // cmap internal.auth: `authenticating` turns it into MongoAuthenticationException
    "ScramFailure", // cmap internal.auth: ScramAuthenticator turns it into MongoAuthenticationException
    "WireFormatException", // cmap internal.wire: the connection turns it into MongoProtocolException
    "SubscriberFailed", // java internal: CursorPublisher unwraps it for the subscriber's onError
)

/** Exception families: a class whose name matches must extend the family's root. */
private val EXCEPTION_FAMILIES = mapOf(
    Regex(".*(Settings|ConnectionString).*Exception") to "InvalidSettingsException",
    Regex("(Mongo)?Cursor.*Exception") to "MongoCursorException",
    Regex("(Mongo)?Network.*Exception") to "MongoNetworkException",
)

/** File names two library modules may share (none: sdam's typealias of cmap's ProxySettings is ProxySettingsAlias.kt). */
private val SHARED_FILE_NAMES = emptySet<String>()

/** A second class of this many lines in a file is a concept of its own. */
private const val MAX_COMPANION_LINES = 40

/** A file longer than this does more than one thing. */
private const val MAX_FILE_LINES = 500

/** Files above [MAX_FILE_LINES] today and their length: each may only shrink, until it is split. */
private val OVERSIZED_FILES = emptyMap<String, Int>()

private fun KoFileDeclaration.isInInternalPackage(): Boolean =
    packagee?.name?.split('.')?.contains("internal") == true

private fun KoFileDeclaration.relativePath(root: File): String = File(path).relativeTo(root).path

/** A top-level declaration of a file, reduced to what the visibility rule reads. */
private class TopLevel(val name: String, val location: String, val internalOrPrivate: Boolean, val optedIn: Boolean)

private fun KoFileDeclaration.topLevelDeclarations(): List<TopLevel> {
    val out = ArrayList<TopLevel>()
    for (d in classesAndInterfacesAndObjects(includeNested = false, includeLocal = false)) {
        out += TopLevel(d.name, d.location, d.hasInternalModifier || d.hasPrivateModifier, d.hasAnnotationWithName(OPT_IN))
    }
    for (d in functions(includeNested = false, includeLocal = false)) {
        out += TopLevel(d.name, d.location, d.hasInternalModifier || d.hasPrivateModifier, d.hasAnnotationWithName(OPT_IN))
    }
    for (d in properties(includeNested = false)) {
        out += TopLevel(d.name, d.location, d.hasInternalModifier || d.hasPrivateModifier, d.hasAnnotationWithName(OPT_IN))
    }
    for (d in typeAliases) {
        out += TopLevel(d.name, d.location, d.hasInternalModifier || d.hasPrivateModifier, d.hasAnnotationWithName(OPT_IN))
    }
    return out
}

private const val OPT_IN = "InternalMooringApi"

/**
 * The simple names of the direct supertypes as written, read from the Kotlin PSI element Konsist
 * parsed (its declarations' `getPsiElement`, public on the JVM though not in Konsist's Kotlin API).
 * Not Konsist's `parents()`: that resolves each supertype by scanning the whole project, whose
 * root Konsist finds only from a Gradle or Maven wrapper or a `.git` directory (a git worktree
 * has a `.git` file), and fails without one.
 */
private fun KoBaseDeclaration.parentNames(): List<String> {
    val psi = javaClass.getMethod("getPsiElement").invoke(this)
    check(psi is KtClassOrObject) { "no class PSI behind $this (Konsist changed?)" }
    return psi.superTypeListEntries.mapNotNull { it.typeAsUserType?.referencedName }
}

/** Every supertype name reachable from [name] through the library's classes (by simple name). */
private fun ancestors(name: String, parentsOf: Map<String, List<String>>): Set<String> {
    val seen = LinkedHashSet<String>()
    val queue = ArrayDeque(parentsOf[name].orEmpty())
    while (queue.isNotEmpty()) {
        val next = queue.removeFirst()
        if (seen.add(next)) queue.addAll(parentsOf[next].orEmpty())
    }
    return seen
}

private fun String.isThrowableName(): Boolean =
    endsWith("Exception") || endsWith("Error") || this == "Throwable" || endsWith("Throwable")

private fun String.isAny(): Boolean = trim().removePrefix("kotlin.").removeSuffix("?") == "Any"

/** Fails with every violation, one a line. */
private fun List<String>.shouldListNone() {
    if (isNotEmpty()) throw AssertionError("$size violation(s):\n" + joinToString("\n"))
}
