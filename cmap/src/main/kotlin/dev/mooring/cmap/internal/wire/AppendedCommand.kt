package dev.mooring.cmap.internal.wire

import dev.mooring.events.InternalMooringApi
import org.bson.BsonDocument
import org.bson.BsonReader
import org.bson.BsonValue
import org.bson.json.JsonWriterSettings

/**
 * Not API ([InternalMooringApi], for `sdam`): a command document with fields appended to it
 * (`lsid`, `$clusterTime`, `maxTimeMS`, `$readPreference`, ...) without copying it. It reads as
 * the copy it replaces would: [base]'s fields in their order, a field appended under a name
 * [base] already has replacing that field's value in place, the others after them in the order
 * appended (the last value appended under a name wins), exactly as `base.clone().append(...)`.
 *
 * The OP_MSG encoder writes it field by field, so no copy is ever made on the way to the socket.
 * [get], [containsKey], [isEmpty] and [getFirstKey] answer from the parts; any other use (iteration,
 * `toJson`, `equals`, a mutation, ...) builds the full document once (thread-safely) and from then
 * on it is a plain document, mutations included, that no longer shares anything with [base] but
 * the values. [base] and the appended values must not be modified while this document is in use.
 */
@InternalMooringApi
public class AppendedCommand private constructor(
    internal val base: BsonDocument,
    /** The field appended last; each links to the one appended before it. */
    internal val last: Field,
) : BsonDocument(0) {
    internal class Field(val name: String, val value: BsonValue, val previous: Field?)

    @Volatile private var built = false

    /** True while the document has not been built (the parts are what it holds). */
    internal val isLazy: Boolean get() = !built

    /** Calls [action] with each appended field in the order appended. */
    internal inline fun forEachAppended(action: (String, BsonValue) -> Unit) {
        var n = 0
        var f: Field? = last
        while (f != null) {
            n++
            f = f.previous
        }
        // few fields (a handful at most): walk the chain once per position, oldest first
        for (i in n - 1 downTo 0) {
            var g: Field = last
            repeat(i) { g = g.previous!! }
            action(g.name, g.value)
        }
    }

    /** The value appended last under [name], or null. */
    internal fun appended(name: String): BsonValue? {
        var f: Field? = last
        while (f != null) {
            if (f.name == name) return f.value
            f = f.previous
        }
        return null
    }

    /** True when [name] was appended before the field [upTo] (for writing each appended name once, at its first position). */
    internal fun appendedBefore(name: String, upTo: Int): Boolean {
        var i = 0
        var found = false
        forEachAppended { n, _ ->
            if (i < upTo && n == name) found = true
            i++
        }
        return found
    }

    private fun build() {
        if (built) return
        synchronized(this) {
            if (built) return
            for ((k, v) in base.entries) super.put(k, v)
            forEachAppended { k, v -> super.put(k, v) }
            built = true
        }
    }

    override fun get(key: String): BsonValue? {
        if (built) return super.get(key)
        return appended(key) ?: base[key]
    }

    override fun containsKey(key: String): Boolean {
        if (built) return super.containsKey(key)
        return appended(key) != null || base.containsKey(key)
    }

    override fun isEmpty(): Boolean = if (built) super.isEmpty() else false

    override fun getFirstKey(): String {
        if (built) return super.getFirstKey()
        if (!base.isEmpty()) return base.firstKey
        var f: Field = last
        while (true) f = f.previous ?: return f.name
    }

    override val size: Int get() = build().let { super.size }
    override val entries: MutableSet<MutableMap.MutableEntry<String, BsonValue>> get() = build().let { super.entries }
    override val keys: MutableSet<String> get() = build().let { super.keys }
    override val values: MutableCollection<BsonValue> get() = build().let { super.values }

    override fun containsValue(value: BsonValue): Boolean = build().let { super.containsValue(value) }

    override fun put(key: String, value: BsonValue): BsonValue? = build().let { super.put(key, value) }

    override fun append(key: String, value: BsonValue): BsonDocument = build().let { super.append(key, value) }

    override fun putAll(from: Map<out String, BsonValue>): Unit = build().let { super.putAll(from) }

    override fun remove(key: String): BsonValue? = build().let { super.remove(key) }

    override fun clear(): Unit = build().let { super.clear() }

    override fun asBsonReader(): BsonReader = build().let { super.asBsonReader() }

    override fun toJson(): String = build().let { super.toJson() }

    override fun toJson(settings: JsonWriterSettings): String = build().let { super.toJson(settings) }

    override fun equals(other: Any?): Boolean = build().let { super.equals(other) }

    override fun hashCode(): Int = build().let { super.hashCode() }

    override fun toString(): String = build().let { super.toString() }

    override fun clone(): BsonDocument = build().let { super.clone() }

    /** Java serialization: as the plain document it reads as (BsonDocument serializes through its own proxy). */
    @Suppress("unused")
    private fun writeReplace(): Any = clone()

    public companion object {
        /**
         * [command] with [name] set to [value] as `command.clone().append(name, value)` would
         * have it, without copying [command] (see [AppendedCommand]). [command] is not changed.
         */
        @JvmStatic
        public fun append(command: BsonDocument, name: String, value: BsonValue): BsonDocument =
            if (command is AppendedCommand && command.isLazy) {
                AppendedCommand(command.base, Field(name, value, command.last))
            } else {
                AppendedCommand(command, Field(name, value, null))
            }

        /** [doc] as a plain document (a copy for an [AppendedCommand], [doc] itself otherwise). */
        internal fun plain(doc: BsonDocument): BsonDocument = if (doc is AppendedCommand) doc.clone() else doc
    }
}
