package dev.mooring.java;

import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/** A fresh in-memory mongo-java-server on loopback for each test; [uri] connects to it. */
abstract class MongoJavaServerFixture {
    protected MongoServer server;
    protected String uri;

    @BeforeEach
    void startServer() {
        server = new MongoServer(new MemoryBackend());
        server.bind("127.0.0.1", 0);
        uri = "mongodb://127.0.0.1:" + server.getLocalAddress().getPort() + "/?serverSelectionTimeoutMS=10000";
    }

    @AfterEach
    void stopServer() {
        server.shutdownNow();
    }
}
