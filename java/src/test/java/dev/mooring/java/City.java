package dev.mooring.java;

import org.bson.codecs.pojo.annotations.BsonId;

/** A record document of the collection tests (bson-record-codec): the name is the `_id`. */
public record City(@BsonId String name, long population) {
}
