package dev.mooring.sdam.topology

import dev.mooring.events.ServerAddress
import dev.mooring.sdam.ReadPreference
import dev.mooring.sdam.ReadPreferenceMode
import dev.mooring.sdam.ServerDescription
import dev.mooring.sdam.ServerType
import dev.mooring.sdam.TopologyType
import dev.mooring.sdam.internal.topology.ReadPreferenceCommand
import io.kotest.core.spec.style.FunSpec
import io.kotest.matchers.shouldBe
import org.bson.BsonDocument

/** The `$readPreference` a command carries per topology and server type (server-selection.md, run-command.md "ReadPreference"). */
class ReadPreferenceCommandSpec : FunSpec({
    val address = ServerAddress.parse("a:27017")
    fun server(type: ServerType) = ServerDescription(address, type)
    val secondaryTagged = ReadPreference(ReadPreferenceMode.SECONDARY, tagSets = listOf(mapOf("dc" to "ny")))
    val taggedDocument = BsonDocument.parse("""{mode: "secondary", tags: [{dc: "ny"}]}""")

    test("topology Single, not a mongos: primary (or none) becomes primaryPreferred; any other read preference is sent as the application set it") {
        for (type in listOf(ServerType.RS_SECONDARY, ServerType.RS_PRIMARY, ServerType.RS_ARBITER, ServerType.RS_OTHER)) {
            ReadPreferenceCommand.forCommand(ReadPreference.PRIMARY, TopologyType.SINGLE, server(type)) shouldBe BsonDocument.parse("""{mode: "primaryPreferred"}""")
            ReadPreferenceCommand.forCommand(secondaryTagged, TopologyType.SINGLE, server(type)) shouldBe taggedDocument
            ReadPreferenceCommand.forCommand(ReadPreference.SECONDARY_PREFERRED, TopologyType.SINGLE, server(type)) shouldBe
                BsonDocument.parse("""{mode: "secondaryPreferred"}""")
        }
    }

    test("never to a standalone; to a mongos or load balancer only a non-primary mode") {
        ReadPreferenceCommand.forCommand(secondaryTagged, TopologyType.SINGLE, server(ServerType.STANDALONE)) shouldBe null
        ReadPreferenceCommand.forCommand(ReadPreference.PRIMARY, TopologyType.SINGLE, server(ServerType.MONGOS)) shouldBe null
        ReadPreferenceCommand.forCommand(secondaryTagged, TopologyType.SINGLE, server(ServerType.MONGOS)) shouldBe taggedDocument
        ReadPreferenceCommand.forCommand(ReadPreference.PRIMARY, TopologyType.SHARDED, server(ServerType.MONGOS)) shouldBe null
        ReadPreferenceCommand.forCommand(ReadPreference.PRIMARY, TopologyType.LOAD_BALANCED, server(ServerType.LOAD_BALANCER)) shouldBe null
        ReadPreferenceCommand.forCommand(secondaryTagged, TopologyType.LOAD_BALANCED, server(ServerType.LOAD_BALANCER)) shouldBe taggedDocument
        ReadPreferenceCommand.forCommand(secondaryTagged, TopologyType.REPLICA_SET_WITH_PRIMARY, server(ServerType.RS_SECONDARY)) shouldBe taggedDocument
        ReadPreferenceCommand.forCommand(ReadPreference.PRIMARY, TopologyType.REPLICA_SET_WITH_PRIMARY, server(ServerType.RS_PRIMARY)) shouldBe null
    }
})
