package dev.mooring.testkit.sharded

import dev.mooring.testkit.server.DefaultHello
import dev.mooring.testkit.server.RequestContext
import org.bson.BsonDocument
import org.bson.BsonObjectId
import org.bson.BsonString
import org.bson.types.ObjectId

/** The hello replies of a mongos and of a mongos behind a load balancer. Pure; thread-safe. */
object MongosHello {
    /** A mongos: the standalone reply plus `msg: "isdbgrid"` (no setName, no hosts). */
    fun mongos(ctx: RequestContext, request: BsonDocument): BsonDocument =
        DefaultHello.standalone(ctx, request).append("msg", BsonString("isdbgrid"))

    /**
     * A mongos reached through a load balancer (load-balancers.md): when the hello carries
     * `loadBalanced: true`, the mongos reply plus the [serviceId] of the backend that answered;
     * without it, a plain mongos reply without `serviceId` (so a driver that did not ask for
     * load-balanced mode sees no serviceId, as a real deployment answers).
     */
    fun behindLoadBalancer(ctx: RequestContext, request: BsonDocument, serviceId: ObjectId): BsonDocument {
        val reply = mongos(ctx, request)
        val asked = request["loadBalanced"]?.let { it.isBoolean && it.asBoolean().value } == true
        if (asked) reply["serviceId"] = BsonObjectId(serviceId)
        return reply
    }
}
