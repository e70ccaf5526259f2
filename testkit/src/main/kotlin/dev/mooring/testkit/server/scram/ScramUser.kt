package dev.mooring.testkit.server.scram

import com.ongres.scram.common.ScramFunctions
import com.ongres.scram.common.ScramMechanism
import com.ongres.scram.common.StringPreparation
import java.security.MessageDigest
import java.security.SecureRandom

/**
 * What a MongoDB server stores for one user and one SCRAM mechanism: salt, iteration count,
 * StoredKey and ServerKey (RFC 5802), never the password. Immutable.
 */
class StoredScramKeys(val mechanism: String, val salt: ByteArray, val iterations: Int, val storedKey: ByteArray, val serverKey: ByteArray) {
    companion object {
        /**
         * Derives the keys the way the server does: SCRAM-SHA-1 from the hex MD5 of
         * `user:mongo:password`, SCRAM-SHA-256 from the SASLprep'd password.
         */
        fun derive(mechanism: String, username: String, password: String, iterations: Int = 4096): StoredScramKeys {
            val lib = ScramMechanism.byName(mechanism) ?: throw IllegalArgumentException("unknown mechanism $mechanism")
            val prepared: CharArray = when (mechanism) {
                "SCRAM-SHA-1" -> MessageDigest.getInstance("MD5").digest("$username:mongo:$password".toByteArray())
                    .joinToString("") { "%02x".format(it) }.toCharArray()
                "SCRAM-SHA-256" -> StringPreparation.SASL_PREPARATION.normalize(password.toCharArray())
                else -> throw IllegalArgumentException("unsupported mechanism $mechanism")
            }
            val salt = ByteArray(if (mechanism == "SCRAM-SHA-1") 16 else 28).also { SecureRandom().nextBytes(it) }
            val salted = ScramFunctions.saltedPassword(lib, StringPreparation.NO_PREPARATION, prepared, salt, iterations)
            val clientKey = ScramFunctions.clientKey(lib, salted)
            return StoredScramKeys(mechanism, salt, iterations, ScramFunctions.storedKey(lib, clientKey), ScramFunctions.serverKey(lib, salted))
        }
    }
}

/** A user of a [ScramServer]: name, authentication database and its keys per mechanism. Immutable. */
class ScramUser(val database: String, val username: String, val keys: Map<String, StoredScramKeys>) {
    /** The mechanisms this user can authenticate with (the hello's `saslSupportedMechs`). */
    val mechanisms: List<String> get() = keys.keys.sorted()

    override fun toString(): String = "ScramUser($database.$username, mechanisms=$mechanisms)"
}
