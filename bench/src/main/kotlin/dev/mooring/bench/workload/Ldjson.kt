package dev.mooring.bench.workload

import org.bson.BsonDocument
import java.io.File
import java.io.FileOutputStream
import java.io.OutputStreamWriter

/** LDJSON (one JSON document per line) as the parallel tasks read and write it, the same way for every library. */
object Ldjson {
    /** [file]'s lines, each parsed with `BsonDocument.parse` (org.bson's JSON reader, which every library here decodes into). */
    fun read(file: File): MutableList<BsonDocument> = parse(file.readLines())

    /** [lines] (a file's, read by the caller where it reads from disk), the blank ones skipped, each parsed as [read] does. */
    fun parse(lines: List<String>): MutableList<BsonDocument> = lines.filter { it.isNotBlank() }.mapTo(ArrayList(), BsonDocument::parse)

    /**
     * Writes documents to [file] as LDJSON (`toJson()`, relaxed extended JSON, one line each); [close] flushes and
     * forces the bytes to disk (`FileChannel.force`). Not thread-safe: one writer per file, one writing thread at a time.
     */
    class Writer(file: File) : AutoCloseable {
        private val out = FileOutputStream(file)
        private val writer = OutputStreamWriter(out, Charsets.UTF_8).buffered(1 shl 16)

        /** Documents written so far. */
        var count: Long = 0
            private set

        fun write(document: BsonDocument) {
            writer.write(document.toJson())
            writer.write('\n'.code)
            count++
        }

        override fun close() {
            writer.flush()
            out.channel.force(true)
            writer.close()
        }
    }
}
