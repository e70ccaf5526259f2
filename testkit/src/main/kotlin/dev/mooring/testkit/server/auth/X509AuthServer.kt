package dev.mooring.testkit.server.auth

import dev.mooring.testkit.server.RequestContext
import dev.mooring.testkit.server.WireServer
import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.atomic.AtomicInteger
import javax.security.auth.x500.X500Principal

/**
 * Server-side MONGODB-X509 for a [WireServer] that terminates TLS with client certificates: the
 * `authenticate` command (and `speculativeAuthenticate` in the hello) succeeds when the client
 * presented a certificate whose subject (RFC 2253) is a registered user and, when the command
 * names a `user`, that name equals the subject. Thread-safe.
 */
class X509AuthServer {
    private val subjects = ConcurrentHashMap.newKeySet<String>()
    private val speculative = AtomicInteger()

    /** Counters and authenticated connections. */
    val gate: AuthGate = AuthGate(setOf("authenticate"))

    /** The `user` field of every authenticate command received (null when absent), in order. */
    val usersSent: MutableList<String?> = CopyOnWriteArrayList()

    /** Handshakes whose `speculativeAuthenticate` was accepted. */
    val speculativeAuthentications: Int get() = speculative.get()

    /** Answer `speculativeAuthenticate` in the hello (true, as mongod 4.4+ does). */
    @Volatile var acceptSpeculative: Boolean = true

    /** Registers the certificate subject [subject] (any X.500 spelling) as a user of `$external`. */
    fun addUser(subject: String) {
        subjects.add(X500Principal(subject).getName(X500Principal.RFC2253))
    }

    /** Installs this mechanism on [server], in front of its current handler and hello. */
    fun install(server: WireServer) {
        val previousHello = server.hello
        server.hello = { ctx, cmd -> decorateHello(ctx, cmd, previousHello(ctx, cmd)) }
        server.handler = gate.handler(server.handler) { ctx, db, cmd -> authenticate(ctx, db, cmd) }
    }

    private fun decorateHello(ctx: RequestContext, cmd: BsonDocument, reply: BsonDocument): BsonDocument {
        val spec = cmd["speculativeAuthenticate"] as? BsonDocument ?: return reply
        if (!acceptSpeculative || !spec.containsKey("authenticate")) return reply
        val db = spec["db"]?.takeIf { it.isString }?.asString()?.value ?: return reply
        val r = authenticate(ctx, db, spec)
        if (r["ok"]?.asNumber()?.intValue() != 1) return reply
        speculative.incrementAndGet()
        r.remove("ok")
        return reply.clone().append("speculativeAuthenticate", r)
    }

    private fun authenticate(ctx: RequestContext, db: String, cmd: BsonDocument): BsonDocument {
        val mechanism = cmd["mechanism"]?.takeIf { it.isString }?.asString()?.value
        if (mechanism != "MONGODB-X509") return WireServer.error(2, "BadValue", "Unsupported mechanism $mechanism")
        val user = cmd["user"]?.takeIf { it.isString }?.asString()?.value
        usersSent.add(user)
        if (db != "\$external") return gate.refused("X.509 authentication must use the \$external database")
        val leaf = ctx.peerCertificates.firstOrNull() ?: return gate.refused("No verified subject name available from client")
        val subject = leaf.subjectX500Principal.getName(X500Principal.RFC2253)
        if (user != null && user != subject) return gate.refused("There is no x.509 client certificate matching the user.")
        if (subject !in subjects) return gate.refused("Could not find user \"$subject\" for db \"\$external\"")
        gate.succeeded(ctx.connectionNumber, subject)
        return BsonDocument("dbname", BsonString("\$external")).append("user", BsonString(subject)).append("ok", BsonInt32(1))
    }
}
