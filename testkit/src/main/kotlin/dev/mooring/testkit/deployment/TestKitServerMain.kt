@file:JvmName("TestKitServerMain")

package dev.mooring.testkit.deployment

import kotlinx.coroutines.runBlocking
import java.util.concurrent.CountDownLatch

/**
 * Runs a [TestKitDeployment] in a process of its own, so that a test runner in another process
 * reaches it only through its connection string (fail points included: `configureFailPoint` is an
 * admin command of the test kit's servers). Arguments:
 *
 * - `--topology single|replicaset|sharded|load-balanced` (default `replicaset`)
 * - `--auth`: every server requires SCRAM as [TestKitDeployment.USER] (the URI carries the credentials)
 * - `--max-wire-version N`: an older server (replica set and sharded cluster only)
 * - `--until-stdin-closes`: stop when standard input closes (for a parent process that may die);
 *   otherwise run until killed.
 *
 * It prints, one per line, shell assignments a runner can `export`: `MONGODB_URI=...` (every
 * router of a sharded cluster; the single-backend load balancer of a load-balanced deployment),
 * `MONGODB_TOPOLOGY=...` and, for a load-balanced deployment, `SINGLE_MONGOS_LB_URI=...` and
 * `MULTI_MONGOS_LB_URI=...`; then `READY`. Test infrastructure, not library API.
 */
fun main(args: Array<String>) {
    fun value(flag: String) = args.indexOf(flag).takeIf { it >= 0 }?.let { args.getOrNull(it + 1) ?: error("$flag needs a value") }
    val topology = value("--topology") ?: "replicaset"
    val auth = "--auth" in args
    val maxWireVersion = value("--max-wire-version")?.toInt() ?: 21
    val deployment = runBlocking { TestKitDeployment.start(topology, auth, maxWireVersion) }
    val stopped = CountDownLatch(1)
    Runtime.getRuntime().addShutdownHook(Thread { deployment.close(); stopped.countDown() })
    if (deployment is TestKitDeployment.LoadBalanced) {
        println("MONGODB_URI=${deployment.uri()}")
        println("SINGLE_MONGOS_LB_URI=${deployment.uri()}")
        println("MULTI_MONGOS_LB_URI=${deployment.uri(multiple = true)}")
    } else {
        println("MONGODB_URI=${deployment.uri(multiple = true)}")
    }
    println("MONGODB_TOPOLOGY=${deployment.topology}")
    println("READY")
    System.out.flush()
    if ("--until-stdin-closes" in args) {
        while (System.`in`.read() >= 0) Unit
        deployment.close()
    } else {
        stopped.await()
    }
}
