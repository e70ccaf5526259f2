package dev.mooring.testkit.server

import org.bson.BsonArray
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonValue
import org.bson.json.JsonMode
import org.bson.json.JsonWriterSettings
import org.mozilla.javascript.Context
import org.mozilla.javascript.RhinoException
import org.mozilla.javascript.ScriptableObject

/**
 * The `mapReduce` command with inline output (`out: {inline: 1}`), as mongod runs it: the `map`
 * function is called with each document matching `query` (in `sort` order, at most `limit`) as
 * `this`, and `emit(key, value)` collects values per key; `reduce(key, values)` folds the values
 * of each key that got more than one; `finalize(key, value)`, when given, maps each result; the
 * `scope` document's fields are global variables. Reply: `{results: [{_id: key, value}] in key
 *  order, ok: 1}`. The functions (BSON JavaScript code or strings) run in Rhino (ES6) on relaxed Extended JSON
 * copies of the documents. Errors: another `out` is refused (the test kit keeps no output
 * collections: code 2 BadValue, naming it); a JavaScript error is JSInterpreterFailure (139).
 * Stateless; each call has its own JavaScript context.
 */
internal object InMemoryMapReduce {
    const val NAME = "mapReduce"

    private val json = JsonWriterSettings.builder().outputMode(JsonMode.RELAXED).build()

    /** Runs [cmd] over [documents] (the collection's, already filtered by `query`). */
    fun execute(cmd: BsonDocument, documents: List<BsonDocument>): BsonDocument {
        val out = cmd["out"]
        if (out !is BsonDocument || out.keys != setOf("inline")) {
            return WireServer.error(2, "BadValue", "the test kit's mapReduce supports out: {inline: 1} only, got ${out?.let { (it as? BsonDocument)?.toJson() ?: it.toString() }}")
        }
        val map = code(cmd["map"]) ?: return WireServer.error(2, "BadValue", "mapReduce needs map as JavaScript code")
        val reduce = code(cmd["reduce"]) ?: return WireServer.error(2, "BadValue", "mapReduce needs reduce as JavaScript code")
        val finalize = cmd["finalize"]?.let { code(it) ?: return WireServer.error(2, "BadValue", "finalize must be JavaScript code") }
        val limit = cmd["limit"]?.takeIf { it.isNumber }?.asNumber()?.intValue()?.takeIf { it > 0 } ?: Int.MAX_VALUE
        val docs = DocumentQuery.sort(documents, cmd["sort"] as? BsonDocument).take(limit)
        val results = try {
            run(map, reduce, finalize, cmd["scope"] as? BsonDocument, docs)
        } catch (e: RhinoException) {
            return WireServer.error(139, "JSInterpreterFailure", "mapReduce JavaScript failed: ${e.details()}")
        }
        val sorted = results.sortedWith { a, b -> DocumentQuery.compare(a.asDocument()["_id"]!!, b.asDocument()["_id"]!!) }
        return BsonDocument("results", BsonArray(sorted)).append("ok", BsonInt32(1))
    }

    private fun code(v: BsonValue?): String? = when {
        v == null -> null
        v.isJavaScript -> v.asJavaScript().code
        v.isJavaScriptWithScope -> v.asJavaScriptWithScope().code
        v.isString -> v.asString().value
        else -> null
    }

    private fun run(map: String, reduce: String, finalize: String?, scope: BsonDocument?, docs: List<BsonDocument>): List<BsonValue> {
        Context.enter().use { cx ->
            cx.languageVersion = Context.VERSION_ES6
            cx.setInterpretedMode(true)
            val global = cx.initStandardObjects()
            ScriptableObject.putProperty(global, "__docs", BsonArray(docs).let { BsonDocument("d", it).toJson(json) })
            ScriptableObject.putProperty(global, "__scope", (scope ?: BsonDocument()).toJson(json))
            val script = """
                var __s = JSON.parse(__scope);
                for (var __k in __s) this[__k] = __s[__k];
                var __groups = {}, __keys = [];
                function emit(k, v) {
                    var s = JSON.stringify(k);
                    if (!(s in __groups)) { __groups[s] = []; __keys.push(s); }
                    __groups[s].push(v);
                }
                var __map = ($map);
                var __reduce = ($reduce);
                var __finalize = ${if (finalize != null) "($finalize)" else "null"};
                var __d = JSON.parse(__docs).d;
                for (var i = 0; i < __d.length; i++) __map.call(__d[i]);
                var __out = [];
                for (var j = 0; j < __keys.length; j++) {
                    var key = JSON.parse(__keys[j]);
                    var vs = __groups[__keys[j]];
                    var v = vs.length == 1 ? vs[0] : __reduce(key, vs);
                    if (__finalize) v = __finalize(key, v);
                    __out.push({_id: key, value: v});
                }
                JSON.stringify({r: __out});
            """.trimIndent()
            val result = cx.evaluateString(global, script, "mapReduce", 1, null) as String
            return BsonDocument.parse(result).getArray("r").toList()
        }
    }
}
