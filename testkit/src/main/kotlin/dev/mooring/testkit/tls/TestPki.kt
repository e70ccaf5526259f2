package dev.mooring.testkit.tls

import org.bouncycastle.asn1.x500.X500Name
import org.bouncycastle.asn1.x509.BasicConstraints
import org.bouncycastle.asn1.x509.ExtendedKeyUsage
import org.bouncycastle.asn1.x509.Extension
import org.bouncycastle.asn1.x509.GeneralName
import org.bouncycastle.asn1.x509.GeneralNames
import org.bouncycastle.asn1.x509.KeyPurposeId
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder
import org.bouncycastle.jce.provider.BouncyCastleProvider
import org.bouncycastle.openssl.jcajce.JcaPEMWriter
import org.bouncycastle.openssl.jcajce.JcaPKCS8Generator
import org.bouncycastle.openssl.jcajce.JceOpenSSLPKCS8EncryptorBuilder
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder
import java.io.StringWriter
import java.math.BigInteger
import java.nio.file.Files
import java.nio.file.Path
import java.security.KeyPair
import java.security.KeyPairGenerator
import java.security.KeyStore
import java.security.SecureRandom
import java.security.cert.X509Certificate
import java.security.spec.ECGenParameterSpec
import java.util.Date
import java.util.concurrent.atomic.AtomicLong
import javax.net.ssl.KeyManagerFactory
import javax.net.ssl.SSLContext
import javax.net.ssl.TrustManagerFactory

/**
 * A throw-away certificate authority for TLS tests, generated in memory with BouncyCastle
 * (EC P-256 keys): issues server and client certificates and writes PEM files under [dir].
 * Thread-safe for issuing; intended for tests only.
 */
class TestPki(private val dir: Path, caName: String = "Mooring Test CA") {
    /** A key pair and its certificate chain (leaf first). */
    class Issued(val keyPair: KeyPair, val chain: List<X509Certificate>) {
        val certificate: X509Certificate get() = chain.first()
    }

    private val serials = AtomicLong(System.currentTimeMillis())

    /** The CA itself (self-signed). */
    val ca: Issued = run {
        val kp = newKeyPair()
        val name = X500Name("CN=$caName")
        Issued(kp, listOf(sign(name, name, kp, kp, isCa = true, sans = emptyList(), client = false)))
    }

    /**
     * A leaf certificate signed by this CA for [commonName], with DNS [dnsNames] and IP
     * [ipAddresses] as subject alternative names; [client] adds the clientAuth usage.
     */
    fun issue(commonName: String, dnsNames: List<String> = emptyList(), ipAddresses: List<String> = emptyList(), client: Boolean = false): Issued {
        val kp = newKeyPair()
        val sans = dnsNames.map { GeneralName(GeneralName.dNSName, it) } + ipAddresses.map { GeneralName(GeneralName.iPAddress, it) }
        val cert = sign(X500Name("CN=$commonName"), X500Name(ca.certificate.subjectX500Principal.name), kp, ca.keyPair, false, sans, client)
        return Issued(kp, listOf(cert, ca.certificate))
    }

    /** Writes the CA certificate as PEM (a tlsCAFile). */
    fun writeCaFile(name: String = "ca.pem"): Path = write(name, pem(ca.certificate))

    /**
     * Writes [issued]'s certificate chain and private key as one PEM file (a
     * tlsCertificateKeyFile); with [password] the key is encrypted PKCS#8 (AES-256-CBC).
     */
    fun writeCertificateKeyFile(issued: Issued, name: String, password: String? = null): Path {
        val encryptor = password?.let {
            JceOpenSSLPKCS8EncryptorBuilder(JcaPKCS8Generator.AES_256_CBC).setProvider(BouncyCastleProvider()).setRandom(SecureRandom()).setPassword(it.toCharArray()).build()
        }
        val key = StringWriter().also { w -> JcaPEMWriter(w).use { it.writeObject(JcaPKCS8Generator(issued.keyPair.private, encryptor)) } }
        return write(name, issued.chain.joinToString("") { pem(it) } + key)
    }

    /** An SSLContext presenting [identity] and trusting this CA (for client certificates too). */
    fun sslContext(identity: Issued?): SSLContext {
        val password = "changeit".toCharArray()
        val kmf = identity?.let {
            val ks = KeyStore.getInstance("PKCS12").apply { load(null, null) }
            ks.setKeyEntry("id", it.keyPair.private, password, it.chain.toTypedArray())
            KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm()).apply { init(ks, password) }
        }
        val ts = KeyStore.getInstance("PKCS12").apply { load(null, null) }
        ts.setCertificateEntry("ca", ca.certificate)
        val tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm()).apply { init(ts) }
        return SSLContext.getInstance("TLS").apply { init(kmf?.keyManagers, tmf.trustManagers, SecureRandom()) }
    }

    private fun write(name: String, text: String): Path {
        Files.createDirectories(dir)
        return dir.resolve(name).also { Files.writeString(it, text) }
    }

    private fun pem(o: Any): String = StringWriter().also { w -> JcaPEMWriter(w).use { it.writeObject(o) } }.toString()

    private fun newKeyPair(): KeyPair = KeyPairGenerator.getInstance("EC").apply { initialize(ECGenParameterSpec("secp256r1")) }.generateKeyPair()

    private fun sign(
        subject: X500Name,
        issuer: X500Name,
        subjectKeys: KeyPair,
        issuerKeys: KeyPair,
        isCa: Boolean,
        sans: List<GeneralName>,
        client: Boolean,
    ): X509Certificate {
        val now = System.currentTimeMillis()
        val builder = JcaX509v3CertificateBuilder(
            issuer, BigInteger.valueOf(serials.incrementAndGet()), Date(now - 3_600_000), Date(now + 86_400_000L),
            subject, subjectKeys.public,
        )
        builder.addExtension(Extension.basicConstraints, true, BasicConstraints(isCa))
        if (sans.isNotEmpty()) builder.addExtension(Extension.subjectAlternativeName, false, GeneralNames(sans.toTypedArray()))
        if (!isCa) {
            val usage = if (client) arrayOf(KeyPurposeId.id_kp_clientAuth) else arrayOf(KeyPurposeId.id_kp_serverAuth)
            builder.addExtension(Extension.extendedKeyUsage, false, ExtendedKeyUsage(usage))
        }
        val signer = JcaContentSignerBuilder("SHA256withECDSA").build(issuerKeys.private)
        return JcaX509CertificateConverter().getCertificate(builder.build(signer))
    }
}
