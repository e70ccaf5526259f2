package dev.mooring.cmap.internal.connection

import org.bson.BsonDocument
import org.bson.BsonInt32
import org.bson.BsonString

/**
 * The `client.env` document of handshake.md: FaaS detection (`aws.lambda`, `azure.func`,
 * `gcp.func`, `vercel`) and container runtime/orchestrator. Pure function of its inputs;
 * thread-safe.
 */
internal object ClientEnvironment {
    /** Returns `client.env`, or null when no field would be populated. */
    fun detect(env: Map<String, String>, dockerEnvExists: Boolean): BsonDocument? {
        fun v(name: String): String? = env[name]?.takeIf { it.isNotEmpty() }
        val aws = v("AWS_EXECUTION_ENV")?.startsWith("AWS_Lambda_") == true || v("AWS_LAMBDA_RUNTIME_API") != null
        val azure = v("FUNCTIONS_WORKER_RUNTIME") != null
        val gcp = v("K_SERVICE") != null || v("FUNCTION_NAME") != null
        val vercel = v("VERCEL") != null
        val detected = listOfNotNull(
            "aws.lambda".takeIf { aws },
            "azure.func".takeIf { azure },
            "gcp.func".takeIf { gcp },
            "vercel".takeIf { vercel },
        )
        val name = when {
            detected.size == 1 -> detected[0]
            detected.toSet() == setOf("aws.lambda", "vercel") -> "vercel"
            else -> null
        }
        val doc = BsonDocument()
        if (name != null) {
            doc["name"] = BsonString(name)
            fun str(field: String, variable: String) = v(variable)?.let { doc[field] = BsonString(it) }
            fun int(field: String, variable: String) = v(variable)?.toIntOrNull()?.let { doc[field] = BsonInt32(it) }
            when (name) {
                "aws.lambda" -> { str("region", "AWS_REGION"); int("memory_mb", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE") }
                "gcp.func" -> {
                    int("memory_mb", "FUNCTION_MEMORY_MB")
                    int("timeout_sec", "FUNCTION_TIMEOUT_SEC")
                    str("region", "FUNCTION_REGION")
                }
                "vercel" -> str("region", "VERCEL_REGION")
            }
        }
        val container = BsonDocument()
        if (dockerEnvExists) container["runtime"] = BsonString("docker")
        if (v("KUBERNETES_SERVICE_HOST") != null) container["orchestrator"] = BsonString("kubernetes")
        if (!container.isEmpty()) doc["container"] = container
        return doc.takeIf { !it.isEmpty() }
    }
}
