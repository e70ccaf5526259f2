package com.example.consumer

import dev.mooring.sdam.MongoCluster
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

class ConsumerTest {
    @Test
    fun `runs against mooring-sdam from a repository`() {
        val location = MongoCluster::class.java.protectionDomain.codeSource.location.toString()
        println("mooring-sdam loaded from $location")
        assertTrue(location.contains("/dev/mooring/mooring-sdam/") && location.endsWith(".jar"), location)
        main()
    }
}
