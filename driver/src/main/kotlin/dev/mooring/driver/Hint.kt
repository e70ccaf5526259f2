package dev.mooring.driver

import org.bson.BsonDocument
import org.bson.BsonString
import org.bson.BsonValue

/** The index an operation should use (the commands' `hint`): by name or by key pattern. Immutable. */
public sealed interface Hint {
    /** The value sent as `hint`. */
    public fun toBsonValue(): BsonValue

    /** An index by name, e.g. `_id_`. */
    public data class Name(val name: String) : Hint {
        override fun toBsonValue(): BsonValue = BsonString(name)
    }

    /** An index by its key pattern, e.g. `{a: 1}`. */
    public data class Keys(val keys: BsonDocument) : Hint {
        override fun toBsonValue(): BsonValue = keys.clone()
    }
}
