package dev.mooring.driver.internal

import dev.mooring.sdam.internal.HelperCommand
import dev.mooring.cmap.MongoCommandException
import dev.mooring.driver.MongoWriteConcernException
import dev.mooring.sdam.ClientSession
import dev.mooring.sdam.MongoCluster
import dev.mooring.sdam.ReadPreference
import dev.mooring.sdam.internal.cursor.CursorPage
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.flow
import org.bson.BsonDocument

/**
 * How index and collection management commands run: writes (create, drop, createIndexes,
 * dropIndexes, renameCollection, the search index commands) on the primary, once (they are not
 * retryable writes), with their write concern errors thrown; listing commands' cursors as
 * documents. Stateless.
 */
internal object AdminCommands {
    /** The server's NamespaceNotFound ("ns not found"). */
    const val NAMESPACE_NOT_FOUND = 26

    /**
     * True when [e] says the namespace does not exist: code 26, or (servers that answer a drop of
     * a missing collection with only the message, as older servers and mongo-java-server do) no
     * code and the message "ns not found". The one home of this rule: drop, dropIndexes,
     * the search index drop and the listings call it.
     */
    fun isNamespaceNotFound(e: MongoCommandException): Boolean =
        e.code == NAMESPACE_NOT_FOUND || (e.code == 0 && e.errmsg?.contains("ns not found") == true)

    /**
     * Runs [command] (its write concern already in it, or none) on [database] on the primary and
     * returns the reply; a `writeConcernError` in it is thrown as [MongoWriteConcernException] for
     * [namespace]. With [missingNamespaceIsOk] a NamespaceNotFound error returns null (a drop of
     * something already gone is not an error). [operationName] names its operation span (null:
     * the command's name; see [HelperCommand]).
     */
    suspend fun write(
        cluster: MongoCluster,
        database: String,
        command: BsonDocument,
        session: ClientSession?,
        timeoutMS: Long?,
        namespace: String,
        missingNamespaceIsOk: Boolean = false,
        operationName: String? = null,
    ): BsonDocument? {
        val reply = try {
            HelperCommand.run(cluster, database, command, ReadPreference.PRIMARY, session, timeoutMS, operationName)
        } catch (e: MongoCommandException) {
            if (missingNamespaceIsOk && isNamespaceNotFound(e)) return null
            throw e
        }
        WriteReplies.writeConcernError(reply)?.let { wce ->
            throw MongoWriteConcernException(wce, null, namespace).apply { WriteReplies.errorLabels(reply).forEach { addErrorLabel(it) } }
        }
        return reply
    }

    /**
     * The documents of [pages]. With [missingNamespaceIsEmpty], a NamespaceNotFound error before
     * the first document (the initial command's, e.g. `listIndexes` on a collection that does not
     * exist) ends the flow empty instead; errors raised downstream of an emitted document are
     * never swallowed.
     */
    fun documents(pages: Flow<CursorPage>, missingNamespaceIsEmpty: Boolean = false): Flow<BsonDocument> = flow {
        var emitted = false
        try {
            pages.collect { page ->
                page.error?.let { throw it }
                for (d in page.documents) {
                    emitted = true
                    emit(d)
                }
            }
        } catch (e: MongoCommandException) {
            if (emitted || !missingNamespaceIsEmpty || !isNamespaceNotFound(e)) throw e
        }
    }
}
