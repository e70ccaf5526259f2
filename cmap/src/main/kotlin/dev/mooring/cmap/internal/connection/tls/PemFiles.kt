package dev.mooring.cmap.internal.connection.tls

import java.io.ByteArrayInputStream
import java.nio.file.Files
import java.nio.file.Path
import java.security.AlgorithmParameters
import java.security.KeyFactory
import java.security.PrivateKey
import java.security.cert.CertificateFactory
import java.security.cert.X509Certificate
import java.security.spec.PKCS8EncodedKeySpec
import java.util.Base64
import javax.crypto.Cipher
import javax.crypto.EncryptedPrivateKeyInfo
import javax.crypto.SecretKeyFactory
import javax.crypto.spec.PBEKeySpec

/**
 * Reads PEM files for tlsCAFile and tlsCertificateKeyFile: certificates, and a private key as
 * PKCS#8 (`PRIVATE KEY`), encrypted PKCS#8 (`ENCRYPTED PRIVATE KEY`, needs the password) or
 * PKCS#1 RSA (`RSA PRIVATE KEY`). Stateless; thread-safe; blocking file I/O (called when a
 * factory is built). Errors are [IllegalArgumentException]s that name the file, never the password.
 */
internal object PemFiles {
    private val BLOCK = Regex("-----BEGIN ([A-Z0-9 ]+)-----([A-Za-z0-9+/=\\s]*?)-----END \\1-----")

    private class Block(val type: String, val der: ByteArray)

    private fun blocks(file: String): List<Block> {
        val text = try {
            Files.readString(Path.of(file))
        } catch (e: Exception) {
            throw IllegalArgumentException("cannot read PEM file '$file': ${e.javaClass.simpleName}: ${e.message}")
        }
        return BLOCK.findAll(text).map { m ->
            val der = try {
                Base64.getMimeDecoder().decode(m.groupValues[2])
            } catch (e: IllegalArgumentException) {
                throw IllegalArgumentException("PEM file '$file' has a malformed ${m.groupValues[1]} block")
            }
            Block(m.groupValues[1], der)
        }.toList()
    }

    /** Every certificate in [file]; at least one. */
    fun certificates(file: String): List<X509Certificate> {
        val factory = CertificateFactory.getInstance("X.509")
        val certs = blocks(file).filter { it.type == "CERTIFICATE" }.map {
            try {
                factory.generateCertificate(ByteArrayInputStream(it.der)) as X509Certificate
            } catch (e: Exception) {
                throw IllegalArgumentException("PEM file '$file' holds an invalid certificate: ${e.message}")
            }
        }
        require(certs.isNotEmpty()) { "PEM file '$file' holds no certificate" }
        return certs
    }

    /** The private key in [file], of the same algorithm as [certificate]'s public key. */
    fun privateKey(file: String, password: CharArray?, certificate: X509Certificate): PrivateKey {
        val all = blocks(file)
        val block = all.firstOrNull { it.type.endsWith("PRIVATE KEY") }
            ?: throw IllegalArgumentException("PEM file '$file' holds no private key")
        val algorithm = certificate.publicKey.algorithm
        val pkcs8: ByteArray = when (block.type) {
            "PRIVATE KEY" -> block.der
            "ENCRYPTED PRIVATE KEY" -> decrypt(file, block.der, password)
            "RSA PRIVATE KEY" -> rsaPkcs1ToPkcs8(block.der)
            else -> throw IllegalArgumentException(
                "PEM file '$file' holds a '${block.type}' block; use PKCS#8 ('PRIVATE KEY' or 'ENCRYPTED PRIVATE KEY') or 'RSA PRIVATE KEY'",
            )
        }
        return try {
            KeyFactory.getInstance(algorithm).generatePrivate(PKCS8EncodedKeySpec(pkcs8))
        } catch (e: Exception) {
            throw IllegalArgumentException("PEM file '$file': the private key is not a valid $algorithm key")
        }
    }

    private fun decrypt(file: String, der: ByteArray, password: CharArray?): ByteArray {
        requireNotNull(password) { "PEM file '$file' holds an encrypted private key but tlsCertificateKeyFilePassword is not set" }
        try {
            val info = EncryptedPrivateKeyInfo(der)
            val params: AlgorithmParameters? = info.algParameters
            val algorithm = params?.toString()?.takeIf { it.startsWith("PBE") } ?: info.algName
            val key = SecretKeyFactory.getInstance(algorithm).generateSecret(PBEKeySpec(password))
            val cipher = Cipher.getInstance(algorithm)
            cipher.init(Cipher.DECRYPT_MODE, key, params)
            return info.getKeySpec(cipher).encoded
        } catch (e: Exception) {
            throw IllegalArgumentException(
                "PEM file '$file': cannot decrypt the private key (wrong tlsCertificateKeyFilePassword or unsupported encryption)",
            )
        }
    }

    /** Wraps a PKCS#1 RSAPrivateKey in a PKCS#8 PrivateKeyInfo. */
    private fun rsaPkcs1ToPkcs8(pkcs1: ByteArray): ByteArray {
        val algorithmId = byteArrayOf(
            0x30, 0x0d, 0x06, 0x09, 0x2a, 0x86.toByte(), 0x48, 0x86.toByte(), 0xf7.toByte(), 0x0d, 0x01, 0x01, 0x01, 0x05, 0x00,
        )
        val version = byteArrayOf(0x02, 0x01, 0x00)
        val octet = der(0x04, pkcs1)
        return der(0x30, version + algorithmId + octet)
    }

    private fun der(tag: Int, content: ByteArray): ByteArray {
        val len = content.size
        val lenBytes = when {
            len < 0x80 -> byteArrayOf(len.toByte())
            len < 0x100 -> byteArrayOf(0x81.toByte(), len.toByte())
            len < 0x10000 -> byteArrayOf(0x82.toByte(), (len ushr 8).toByte(), len.toByte())
            else -> byteArrayOf(0x83.toByte(), (len ushr 16).toByte(), (len ushr 8).toByte(), len.toByte())
        }
        return byteArrayOf(tag.toByte()) + lenBytes + content
    }
}
