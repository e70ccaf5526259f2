package dev.mooring.java;

import dev.mooring.driver.gridfs.GridFSUploadOptions;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** JavaGridFSBucket against mongo-java-server: publisher and InputStream uploads, publisher downloads. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class JavaGridFSTest extends CollectionTestSupport {

    private static byte[] bytes(int size) {
        byte[] b = new byte[size];
        for (int i = 0; i < size; i++) b[i] = (byte) (i % 251);
        return b;
    }

    /** Publishes [buffers] as demanded (then onComplete, or onError with [failure]); records the largest demand outstanding. */
    static final class BufferPublisher implements Flow.Publisher<ByteBuffer> {
        final List<ByteBuffer> buffers;
        final RuntimeException failure;
        final AtomicLong maxOutstanding = new AtomicLong();

        BufferPublisher(List<ByteBuffer> buffers, RuntimeException failure) {
            this.buffers = buffers;
            this.failure = failure;
        }

        @Override
        public void subscribe(Flow.Subscriber<? super ByteBuffer> s) {
            s.onSubscribe(new Flow.Subscription() {
                int next;
                long outstanding;
                boolean done;

                @Override
                public synchronized void request(long n) {
                    outstanding += n;
                    maxOutstanding.accumulateAndGet(outstanding, Math::max);
                    while (!done && outstanding > 0 && next < buffers.size()) {
                        outstanding--;
                        s.onNext(buffers.get(next++));
                    }
                    if (!done && next == buffers.size()) {
                        done = true;
                        if (failure != null) s.onError(failure); else s.onComplete();
                    }
                }

                @Override
                public synchronized void cancel() {
                    done = true;
                }
            });
        }
    }

    private static byte[] download(Flow.Publisher<ByteBuffer> publisher) {
        Recorder<ByteBuffer> r = new Recorder<>();
        publisher.subscribe(r);
        r.subscription.request(Long.MAX_VALUE);
        awaitUntil("the end of the download", r::ended);
        if (r.error.get() != null) throw new AssertionError("the download failed", r.error.get());
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        synchronized (r.received) {
            for (ByteBuffer b : r.received) {
                byte[] a = new byte[b.remaining()];
                b.get(a);
                out.writeBytes(a);
            }
        }
        return out.toByteArray();
    }

    @Test
    void publisherUploadOneBufferAtATimeAndPublisherDownload() {
        try (JavaMongoCluster cluster = MongoClusters.create(uri)) {
            JavaGridFSBucket bucket = cluster.getDatabase("media").getGridFSBucket();
            byte[] data = bytes(1000);
            BufferPublisher source = new BufferPublisher(
                List.of(ByteBuffer.wrap(data, 0, 300), ByteBuffer.wrap(data, 300, 300), ByteBuffer.wrap(data, 600, 400)), null);
            BsonValue id = bucket.upload("clip", source, new GridFSUploadOptions(null, null, 256)).join();
            assertEquals(1, source.maxOutstanding.get()); // one buffer requested at a time
            assertArrayEquals(data, download(bucket.download(id)));
            assertEquals(4, cluster.getDatabase("media").getCollection("fs.chunks").countDocuments().join());
        }
    }

    @Test
    void inputStreamUploadDownloadByNameAndFileManagement() {
        try (JavaMongoCluster cluster = MongoClusters.create(uri)) {
            JavaGridFSBucket bucket = cluster.getDatabase("media").getGridFSBucket();
            byte[] data = bytes(300_000);
            BsonValue id = bucket.upload("big", new ByteArrayInputStream(data)).join();
            assertArrayEquals(data, download(bucket.downloadByName("big", -1)));
            bucket.rename(id, "renamed").join();
            assertArrayEquals(data, download(bucket.downloadByName("renamed", 0)));
            bucket.delete(id).join();
            CompletionException e = assertThrows(CompletionException.class, () -> bucket.delete(id).join());
            assertTrue(e.getCause() instanceof dev.mooring.driver.gridfs.GridFSFileNotFoundException, e.getCause().toString());
        }
    }

    @Test
    void aSourcePublisherErrorAbortsTheUploadAndFailsTheFuture() {
        try (JavaMongoCluster cluster = MongoClusters.create(uri)) {
            JavaGridFSBucket bucket = cluster.getDatabase("media").getGridFSBucket();
            IllegalStateException boom = new IllegalStateException("camera unplugged");
            BufferPublisher source = new BufferPublisher(List.of(ByteBuffer.wrap(bytes(10))), boom);
            GridFSUploadOptions options = new GridFSUploadOptions(new BsonString("broken"), null, 4);
            CompletionException e = assertThrows(CompletionException.class, () -> bucket.upload("x", source, options).join());
            assertSame(boom, e.getCause());
            assertEquals(0, cluster.getDatabase("media").getCollection("fs.chunks").countDocuments(new BsonDocument("files_id", new BsonString("broken"))).join());
        }
    }
}
