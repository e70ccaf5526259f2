package dev.mooring.build

import dev.mooring.cmap.ConnectionPool
import dev.mooring.events.EventBus
import dev.mooring.java.MongoClusters
import dev.mooring.sdam.MongoCluster
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.collections.shouldBeEmpty
import io.kotest.matchers.ints.shouldBeGreaterThan
import java.io.DataInputStream
import java.io.File
import java.io.InputStream
import java.util.zip.ZipFile

/**
 * No method of the library is larger than HotSpot compiles. A method with more than 8,000 bytes
 * of bytecode (`-XX:+DontCompileHugeMethods`, the default) is never JIT-compiled and runs in the
 * interpreter for the life of the JVM. Inline suspend functions make that easy to reach: inlining
 * the operation runner into each operation made `MongoCluster.runByReadPreference` 10,111 bytes,
 * and the ping path ran interpreted (20.6 instead of 15.8 µs of CPU per ping).
 */
class CompilableMethodsSpec : FunSpec({
    test("every method of events, cmap, sdam and java has at most 8,000 bytes of bytecode") {
        val modules = listOf(EventBus::class.java, ConnectionPool::class.java, MongoCluster::class.java, MongoClusters::class.java)
            .map { File(it.protectionDomain.codeSource.location.toURI()) }
        var classes = 0
        val huge = ArrayList<String>()
        for (module in modules) {
            forEachClass(module) { name, input ->
                classes++
                for ((method, length) in ClassFileMethods.codeLengths(input)) {
                    if (length > HUGE_METHOD_LIMIT) huge += "$name.$method: $length bytes"
                }
            }
        }
        classes shouldBeGreaterThan 100 // the modules were found and read
        huge.shouldBeEmpty()
    }
})

private const val HUGE_METHOD_LIMIT = 8_000

private fun forEachClass(location: File, action: (String, InputStream) -> Unit) {
    if (location.isDirectory) {
        location.walkTopDown().filter { it.isFile && it.name.endsWith(".class") }.forEach { f ->
            f.inputStream().use { action(f.relativeTo(location).path, it) }
        }
    } else {
        ZipFile(location).use { zip ->
            for (e in zip.entries()) if (e.name.endsWith(".class")) zip.getInputStream(e).use { action(e.name, it) }
        }
    }
}

/** Reads the code length of every method of one class file (JVMS §4: constant pool, fields, methods, the Code attribute). */
private object ClassFileMethods {
    fun codeLengths(input: InputStream): List<Pair<String, Int>> {
        val d = DataInputStream(input.buffered())
        require(d.readInt() == 0xCAFEBABE.toInt()) { "not a class file" }
        d.readUnsignedShort()
        d.readUnsignedShort()
        val count = d.readUnsignedShort()
        val utf8 = arrayOfNulls<String>(count)
        var i = 1
        while (i < count) {
            when (val tag = d.readUnsignedByte()) {
                1 -> utf8[i] = d.readUTF()
                3, 4 -> d.skipBytes(4)
                5, 6 -> { d.skipBytes(8); i++ } // long and double take two entries
                7, 8, 16, 19, 20 -> d.skipBytes(2)
                9, 10, 11, 12, 17, 18 -> d.skipBytes(4)
                15 -> d.skipBytes(3)
                else -> error("unknown constant pool tag $tag")
            }
            i++
        }
        d.skipBytes(6) // access flags, this class, super class
        d.skipBytes(2 * d.readUnsignedShort()) // interfaces
        repeat(d.readUnsignedShort()) { // fields
            d.skipBytes(6)
            skipAttributes(d)
        }
        val methods = ArrayList<Pair<String, Int>>()
        repeat(d.readUnsignedShort()) {
            d.skipBytes(2)
            val name = utf8[d.readUnsignedShort()] + utf8[d.readUnsignedShort()]
            repeat(d.readUnsignedShort()) {
                val attribute = utf8[d.readUnsignedShort()]
                val length = d.readInt()
                if (attribute == "Code") {
                    d.skipBytes(4) // max_stack, max_locals
                    val codeLength = d.readInt()
                    methods += name to codeLength
                    d.skipBytes(length - 8)
                } else {
                    d.skipBytes(length)
                }
            }
        }
        return methods
    }

    private fun skipAttributes(d: DataInputStream) {
        repeat(d.readUnsignedShort()) {
            d.skipBytes(2)
            d.skipBytes(d.readInt())
        }
    }
}
