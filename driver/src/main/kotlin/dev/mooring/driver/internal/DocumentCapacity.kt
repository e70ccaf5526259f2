package dev.mooring.driver.internal

/**
 * The initial capacity of a `BsonDocument` (its `LinkedHashMap`) that will hold [elements]
 * entries without rehashing: a `HashMap` holds capacity × 0.75 entries before it grows, so
 * ⌈elements ÷ 0.75⌉. `BsonDocument()` and `BsonDocument(key, value)` start at 16 slots, which a
 * document of two or three fields built per write model pays for in full.
 */
internal fun capacityFor(elements: Int): Int = (elements * 4 + 2) / 3

/** 1 for an optional field that is set ([option] not null), else 0: for counting a document's fields before creating it. */
internal fun present(option: Any?): Int = if (option == null) 0 else 1
