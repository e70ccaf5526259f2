package dev.mooring.driver

import dev.mooring.sdam.TimeoutMode
import org.bson.BsonValue

/**
 * How many data-bearing members must finish building an index before the primary commits it
 * (index-management.md `commitQuorum`; MongoDB 4.4+). Immutable; safe to share between threads.
 */
public sealed interface CommitQuorum {
    /** This many data-bearing members, the primary included (`commitQuorum: <n>`; 0 disables the quorum). */
    public data class Members(val count: Int) : CommitQuorum {
        init {
            require(count >= 0) { "commitQuorum must not be negative, got $count" }
        }
    }

    /** A named quorum: `majority`, `votingMembers` (the server's default) or a replica set tag set name. */
    public data class Named(val name: String) : CommitQuorum {
        init {
            require(name.isNotEmpty()) { "a commitQuorum name must not be empty" }
        }
    }

    public companion object {
        /** All voting data-bearing members (the server's default). */
        @JvmField public val VOTING_MEMBERS: CommitQuorum = Named("votingMembers")

        /** A majority of the data-bearing voting members. */
        @JvmField public val MAJORITY: CommitQuorum = Named("majority")
    }
}

/**
 * The options of [MongoCollection.createIndex] and [MongoCollection.createIndexes]
 * (index-management.md `CreateIndexOptions`/`CreateIndexesOptions`, combined); each one left null
 * is not sent. Immutable; safe to share between threads.
 */
public data class CreateIndexOptions(
    /**
     * The build's commit quorum. Needs MongoDB 4.4+: against an older primary the call fails with
     * [IllegalArgumentException] before the command is sent (index-management.md Q&A).
     */
    val commitQuorum: CommitQuorum? = null,
    /** Server-side time limit, deprecated by timeoutMS: not sent when a timeoutMS (0 included) applies. */
    val maxTimeMS: Long? = null,
    /** A comment attached to the command. */
    val comment: BsonValue? = null,
    /** MongoDB's internal `rawData` option ([RawData], behind [MooringRawDataOption]); sent only to MongoDB 8.2+. Null: not sent. */
    val rawData: RawData? = null,
) {
    init {
        require(maxTimeMS == null || maxTimeMS >= 0) { "maxTimeMS must not be negative, got $maxTimeMS" }
    }
}

/**
 * The options of [MongoCollection.dropIndex] and [MongoCollection.dropIndexes]
 * (index-management.md `DropIndexOptions`/`DropIndexesOptions`); each one left null is not sent.
 * Immutable; safe to share between threads.
 */
public data class DropIndexOptions(
    /** Server-side time limit, deprecated by timeoutMS: not sent when a timeoutMS (0 included) applies. */
    val maxTimeMS: Long? = null,
    /** A comment attached to the command. */
    val comment: BsonValue? = null,
    /** MongoDB's internal `rawData` option ([RawData], behind [MooringRawDataOption]); sent only to MongoDB 8.2+. Null: not sent. */
    val rawData: RawData? = null,
) {
    init {
        require(maxTimeMS == null || maxTimeMS >= 0) { "maxTimeMS must not be negative, got $maxTimeMS" }
    }
}

/**
 * The options of [MongoCollection.listIndexes] (index-management.md `ListIndexesOptions`); each one
 * left null is not sent. Immutable; safe to share between threads.
 */
public data class ListIndexesOptions(
    /** Index specifications per batch (`cursor.batchSize` and each getMore's). */
    val batchSize: Int? = null,
    /** A comment attached to the command and to each getMore (index-management.md). */
    val comment: BsonValue? = null,
    /** How the collection's timeoutMS applies to the cursor (client-side-operations-timeout.md). */
    val timeoutMode: TimeoutMode? = null,
    /** MongoDB's internal `rawData` option ([RawData], behind [MooringRawDataOption]); sent only to MongoDB 8.2+. Null: not sent. */
    val rawData: RawData? = null,
) {
    init {
        require(batchSize == null || batchSize >= 0) { "batchSize must not be negative, got $batchSize" }
    }
}
