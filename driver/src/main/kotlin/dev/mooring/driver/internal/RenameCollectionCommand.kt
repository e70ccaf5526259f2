package dev.mooring.driver.internal

import dev.mooring.sdam.ClientSession
import org.bson.BsonBoolean
import org.bson.BsonDocument
import org.bson.BsonString

/** `renameCollection` (an admin command on full namespaces, with the collection's write concern). Stateless. */
internal object RenameCollectionCommand {
    suspend fun run(defaults: Defaults, from: String, toDatabase: String, toCollection: String, dropTarget: Boolean, session: ClientSession?) {
        Names.checkDatabase(toDatabase)
        Names.checkCollection(toCollection)
        val source = "${defaults.databaseName}.$from"
        val cmd = BsonDocument("renameCollection", BsonString(source)).append("to", BsonString("$toDatabase.$toCollection"))
        if (dropTarget) cmd["dropTarget"] = BsonBoolean.TRUE
        Concerns.applyWriteConcern(cmd, defaults.writeConcern, defaults.cluster.settings.writeConcern, defaults.timeoutSet)
        AdminCommands.write(defaults.cluster, "admin", cmd, session, defaults.timeoutMS, source)
    }
}
