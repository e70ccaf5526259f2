package dev.mooring.testkit.server

import dev.mooring.testkit.WireClient
import dev.mooring.testkit.replset.ReplicaSetSimulator
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import io.kotest.matchers.string.shouldStartWith
import org.bson.BsonDocument

/**
 * A test kit server simulating an older MongoDB (by its wire version) refuses the command fields
 * that release does not know, as its parser answers, and the field names it does not store; a
 * newer one runs the same commands.
 */
class ServerVersionFieldsSpec : FunSpec({
    fun doc(json: String) = BsonDocument.parse(json)
    fun code(reply: BsonDocument) = reply.getNumber("code").intValue()
    fun ok(reply: BsonDocument) = reply.getNumber("ok").intValue() == 1

    suspend fun <T> server(maxWireVersion: Int, block: suspend (WireServer) -> T): T =
        WireServer.start().also { it.maxWireVersion = maxWireVersion }.use { s ->
            WireClient.run(s.address, doc("{insert: 'c', documents: [{_id: 1, x: 1}, {_id: 2, x: 2}]}"), "d")
            block(s)
        }

    test("a 4.2 server refuses comment on delete as its IDL parser does (40415); a 4.4 server runs it") {
        val command = doc("{delete: 'c', deletes: [{q: {_id: 1}, limit: 1}], comment: 'why'}")
        server(8) { s ->
            val reply = WireClient.run(s.address, command, "d")
            code(reply) shouldBe 40415
            reply.getString("codeName").value shouldBe "Location40415"
            reply.getString("errmsg").value shouldBe "BSON field 'delete.comment' is an unknown field."
            s.collections.documents("d", "c").size shouldBe 2
        }
        server(9) { s ->
            val reply = WireClient.run(s.address, command, "d")
            ok(reply) shouldBe true
            reply.getNumber("n").intValue() shouldBe 1
        }
    }

    test("a statement's field is refused with the statement array in its path: delete hint before 4.4, update sort before 8.0") {
        server(8) { s ->
            WireClient.run(s.address, doc("{delete: 'c', deletes: [{q: {_id: 1}, limit: 1, hint: {_id: 1}}]}"), "d")
                .getString("errmsg").value shouldBe "BSON field 'delete.deletes.hint' is an unknown field."
            // update's hint came with 4.2
            ok(WireClient.run(s.address, doc("{update: 'c', updates: [{q: {_id: 1}, u: {\$set: {y: 1}}, hint: {_id: 1}}]}"), "d")) shouldBe true
        }
        val sorted = doc("{update: 'c', updates: [{q: {_id: {\$gt: 0}}, u: {\$set: {y: 1}}, sort: {_id: -1}}]}")
        server(21) { s ->
            val reply = WireClient.run(s.address, sorted, "d")
            code(reply) shouldBe 40415
            reply.getString("errmsg").value shouldBe "BSON field 'update.updates.sort' is an unknown field."
        }
        server(25) { s -> ok(WireClient.run(s.address, sorted, "d")) shouldBe true }
    }

    test("before 4.4 a comment is a string only where the command knew one: find (FailedToParse), aggregate (TypeMismatch)") {
        server(8) { s ->
            ok(WireClient.run(s.address, doc("{find: 'c', filter: {}, comment: 'text'}"), "d")) shouldBe true
            val find = WireClient.run(s.address, doc("{find: 'c', filter: {}, comment: {key: 'value'}}"), "d")
            code(find) shouldBe 9
            find.getString("errmsg").value shouldBe "Failed to parse: comment: {\"key\": \"value\"}. 'comment' field must be of BSON type string."
            val aggregate = WireClient.run(s.address, doc("{aggregate: 'c', pipeline: [], cursor: {}, comment: {key: 'value'}}"), "d")
            code(aggregate) shouldBe 14
            aggregate.getString("errmsg").value shouldBe "comment must be a string, not a object"
            val allowDiskUse = WireClient.run(s.address, doc("{find: 'c', filter: {}, allowDiskUse: false}"), "d")
            code(allowDiskUse) shouldBe 9
            allowDiskUse.getString("errmsg").value shouldStartWith "Failed to parse: "
            allowDiskUse.getString("errmsg").value.endsWith("Unrecognized field 'allowDiskUse'.") shouldBe true
        }
        server(9) { s ->
            ok(WireClient.run(s.address, doc("{find: 'c', filter: {}, comment: {key: 'value'}, allowDiskUse: true}"), "d")) shouldBe true
            ok(WireClient.run(s.address, doc("{aggregate: 'c', pipeline: [], cursor: {}, comment: {key: 'value'}}"), "d")) shouldBe true
        }
    }

    test("count and distinct take a comment of any type from 4.4.14: the 4.4.0 a wire version 9 server simulates refuses a document") {
        server(9) { s ->
            val distinct = WireClient.run(s.address, doc("{distinct: 'c', key: 'x', query: {}, comment: {key: 'value'}}"), "d")
            code(distinct) shouldBe 14
            distinct.getString("errmsg").value shouldBe "BSON field 'distinct.comment' is the wrong type 'object', expected type 'string'"
            ok(WireClient.run(s.address, doc("{count: 'c', comment: 'text'}"), "d")) shouldBe true
        }
        server(13) { s -> ok(WireClient.run(s.address, doc("{count: 'c', comment: {key: 'value'}}"), "d")) shouldBe true }
    }

    test("a 4.2 findAndModify refuses a hint or comment with its own parser's code (51177)") {
        server(8) { s ->
            val reply = WireClient.run(s.address, doc("{findAndModify: 'c', query: {_id: 1}, update: {\$inc: {x: 1}}, hint: {_id: 1}}"), "d")
            code(reply) shouldBe 51177
            reply.getString("errmsg").value shouldBe "BSON field 'hint' is an unknown field."
            s.collections.documents("d", "c").first()["x"] shouldBe org.bson.BsonInt32(1)
        }
        server(9) { s ->
            ok(WireClient.run(s.address, doc("{findAndModify: 'c', query: {_id: 1}, remove: true, comment: 'why'}"), "d")) shouldBe true
        }
    }

    test("before 5.0 a dollar-prefixed field name is not stored: a top-level one inserted is a write error, one in a replacement DollarPrefixedFieldName") {
        server(9) { s ->
            val insert = WireClient.run(s.address, doc("{insert: 'c', documents: [{_id: 3}, {_id: 4, \$a: 1}, {_id: 5}]}"), "d")
            ok(insert) shouldBe true
            insert.getNumber("n").intValue() shouldBe 1
            val error = insert.getArray("writeErrors").single().asDocument()
            error.getNumber("index").intValue() shouldBe 1
            error.getNumber("code").intValue() shouldBe 2
            error.getString("errmsg").value shouldBe "Document can't have \$ prefixed field names: \$a"
            // a nested one in an inserted document, and a DBRef, are stored
            ok(WireClient.run(s.address, doc("{insert: 'c', documents: [{_id: 6, a: {\$b: 1}, r: {\$ref: 'c', \$id: 1}}]}"), "d")) shouldBe true
            val replace = WireClient.run(s.address, doc("{findAndModify: 'c', query: {_id: 1}, update: {_id: 1, a: {\$b: 1}}}"), "d")
            code(replace) shouldBe 52
            replace.getString("errmsg").value shouldBe "The dollar (\$) prefixed field '\$b' in 'a.\$b' is not valid for storage."
            val update = WireClient.run(s.address, doc("{update: 'c', updates: [{q: {_id: 1}, u: {a: [{\$b: 1}]}}]}"), "d")
            update.getArray("writeErrors").single().asDocument().getNumber("code").intValue() shouldBe 52
            s.collections.documents("d", "c").first() shouldBe doc("{_id: 1, x: 1}")
        }
        server(13) { s ->
            ok(WireClient.run(s.address, doc("{insert: 'c', documents: [{_id: 4, \$a: 1}]}"), "d")) shouldBe true
            ok(WireClient.run(s.address, doc("{findAndModify: 'c', query: {_id: 1}, update: {_id: 1, a: {\$b: 1}}}"), "d")) shouldBe true
        }
    }

    test("a replica set member refuses by the wire version the simulator gives it") {
        ReplicaSetSimulator.start(dataMembers = 1, maxWireVersion = 8).use { rs ->
            val primary = rs.members.first()
            WireClient.run(primary.address, doc("{insert: 'c', documents: [{_id: 1}], comment: 'why'}"), "d")
                .getString("errmsg").value shouldBe "BSON field 'insert.comment' is an unknown field."
            rs.setWireVersions(primary, 0, 9)
            ok(WireClient.run(primary.address, doc("{insert: 'c', documents: [{_id: 1}], comment: 'why'}"), "d")) shouldBe true
        }
    }
})
