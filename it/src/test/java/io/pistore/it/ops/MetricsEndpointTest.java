package io.pistore.it.ops;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.app.metrics.MetricsText;
import io.pistore.app.metrics.MetricsText.Sample;
import io.pistore.engine.BlockDevice;
import io.pistore.engine.Transports;
import io.pistore.engine.volume.Volume;
import io.pistore.engine.volume.VolumeStore;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.CheckFlags;
import io.pistore.integrity.Pi;
import io.pistore.integrity.PiContext;
import io.pistore.integrity.ScatterList;
import io.pistore.server.PistoreServer;
import io.pistore.spi.BlockTransport;
import io.pistore.spi.Completion;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.spi.Protection;
import io.pistore.spi.Status;
import io.pistore.spi.TransportOptions;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A server's metrics endpoint ({@code serve --metrics}, built here with {@link PistoreServer}): a real
 * HTTP client scrapes the endpoint while a host does I/O, and the
 * counters move; PI errors appear under their kind and the place that caught them.
 */
class MetricsEndpointTest {
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    static List<Sample> scrape(String url) throws Exception {
        HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(url)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode());
        return MetricsText.parse(r.body());
    }

    static double value(List<Sample> s, String name, String... labels) {
        Map<String, String> match = new java.util.HashMap<>();
        for (int i = 0; i < labels.length; i += 2) {
            match.put(labels[i], labels[i + 1]);
        }
        return MetricsText.sum(s, name, match);
    }

    @Test
    void countersMoveWithIoAndAWireGuardErrorIsCountedAsSuch() throws Exception {
        BlockFormat m1 = BlockFormat.parse("512+8");
        try (PistoreServer server = PistoreServer.builder().memoryVolume("m1", m1, (16 << 20) / m1.dataSize())
                .listen("tcp", "127.0.0.1:0").metrics("127.0.0.1:0").metricsLatencySample(1).build().start()) {
            String address = server.listeners().get(0).address();
            String url = server.metrics().url();
            assertTrue(url.startsWith("http://127.0.0.1:"), url);
            List<Sample> before = scrape(url);
            assertEquals(0, value(before, "pistore_requests_total", "volume", "m1"));
            assertTrue(value(before, "jvm_memory_used_bytes") > 0, "JVM metrics are there too");

            try (BlockTransport t = Transports.find("tcp", TransportOptions.NONE).create(TransportOptions.NONE);
                 HostConnection c = t.connect(address, new ConnectOptions(1, 8))) {
                assertEquals(1, value(scrape(url), "pistore_connections", "transport", "tcp"));
                BlockDevice d = BlockDevice.open(c, "m1");
                BlockFormat f = d.format();
                for (int i = 0; i < 10; i++) {
                    d.writeSync(i * 8L, ByteBuffer.allocate(4096));
                }
                for (int i = 0; i < 5; i++) {
                    d.readSync(i * 8L, ByteBuffer.allocate(4096));
                }
                d.flushSync();

                List<Sample> s = scrape(url);
                assertEquals(10, value(s, "pistore_requests_total", "transport", "tcp", "volume", "m1", "op", "write"));
                assertEquals(5, value(s, "pistore_requests_total", "transport", "tcp", "volume", "m1", "op", "read"));
                assertEquals(1, value(s, "pistore_requests_total", "volume", "m1", "op", "flush"));
                assertEquals(40960, value(s, "pistore_request_bytes_total", "volume", "m1", "op", "write"));
                assertEquals(20480, value(s, "pistore_request_bytes_total", "volume", "m1", "op", "read"));
                assertEquals(10, value(s, "pistore_request_latency_seconds_count", "volume", "m1", "op", "write"));
                assertEquals(10, value(s, "pistore_request_latency_seconds_bucket", "volume", "m1", "op", "write",
                        "le", "+Inf"));
                assertEquals(0, value(s, "pistore_requests_in_flight", "volume", "m1"));

                // PI pass-through from the host with data changed after its PI was made: the tcp
                // target's check of the arriving bytes refuses it
                long lba = 100;
                byte[] data = new byte[2 * f.dataSize()];
                byte[] meta = new byte[2 * f.metadataSize()];
                PiContext ctx = PiContext.builder(f).initialRefTag(f.refTagOf(lba)).build();
                Pi.generate(ctx, ScatterList.wrap(data), ScatterList.wrap(meta), 2);
                data[f.dataSize() + 3] ^= 0x40;
                Completion w = d.write(lba, ScatterList.wrap(data), ScatterList.wrap(meta),
                        Protection.pass(CheckFlags.ALL, f.refTagOf(lba), 0, 0xFFFF), false).get(10, TimeUnit.SECONDS);
                assertEquals(Status.GUARD_CHECK, w.status(), w.toString());

                s = scrape(url);
                assertEquals(1, value(s, "pistore_pi_errors_total", "volume", "m1", "kind", "guard", "where", "wire"));
                assertEquals(1, value(s, "pistore_pi_errors_total", "volume", "m1"), "one error, counted once");
            }
        }
    }

    @Test
    void aBlockThatWentBadAtRestIsCountedWhenRead(@TempDir Path dir) throws Exception {
        BlockFormat f = BlockFormat.of(512, 8);
        try (VolumeStore store = VolumeStore.open(dir)) {
            Volume v = store.create("v1", f, 1024);
            byte[] data = new byte[f.dataSize()];
            byte[] meta = new byte[f.metadataSize()];
            Pi.generate(PiContext.builder(f).initialRefTag(f.refTagOf(7)).build(), ScatterList.wrap(data),
                    ScatterList.wrap(meta), 1);
            meta[6] ^= 0x01; // the stored ref tag no longer names LBA 7
            v.write(7, 1, ScatterList.wrap(data), ScatterList.wrap(meta), true);
        }
        String listen = "metrics-at-rest-" + System.nanoTime();
        try (PistoreServer server = PistoreServer.builder().dataDir(dir).listen("local", listen).metrics("0").build()
                .start()) {
            String url = server.metrics().url();
            assertEquals(listen, server.listeners().get(0).address());
            assertTrue(url.startsWith("http://127.0.0.1:"), "a bare port listens on loopback: " + url);
            try (BlockTransport t = Transports.find("local", TransportOptions.NONE).create(TransportOptions.NONE);
                 HostConnection c = t.connect(listen, new ConnectOptions(1, 8))) {
                BlockDevice d = BlockDevice.open(c, "v1");
                Completion r = d.read(7, ScatterList.wrap(new byte[f.dataSize()])).get(10, TimeUnit.SECONDS);
                assertEquals(Status.REF_TAG_CHECK, r.status(), r.toString());
                List<Sample> s = scrape(url);
                assertEquals(1, value(s, "pistore_pi_errors_total", "transport", "local", "volume", "v1",
                        "kind", "ref", "where", "rest"));
                assertEquals(0, value(s, "pistore_pi_errors_total", "volume", "v1", "where", "target"));
                assertEquals(1, value(s, "pistore_request_failures_total", "volume", "v1", "op", "read",
                        "status", "ref_tag_check"));
            }
        }
    }

    @Test
    void aFileVolumeShowsItsJournalAndCacheFigures(@TempDir Path dir) throws Exception {
        BlockFormat f = BlockFormat.of(512, 8);
        try (VolumeStore store = VolumeStore.open(dir)) {
            store.create("v1", f, 1024);
        }
        String listen = "metrics-journal-" + System.nanoTime();
        try (PistoreServer server = PistoreServer.builder().dataDir(dir).listen("local", listen).metrics("0")
                .cacheBytes(1 << 20).build().start()) {
            String url = server.metrics().url();
            List<Sample> before = scrape(url);
            assertEquals(0, value(before, "pistore_journal_records_total", "volume", "v1"));
            assertEquals(0, value(before, "pistore_journal_replayed_records", "volume", "v1"), "closed cleanly");
            assertTrue(value(before, "pistore_journal_capacity_bytes", "volume", "v1") > 0);
            assertEquals(0, value(before, "pistore_journal_failed", "volume", "v1"), "writes do not fail");
            assertEquals(0, value(before, "pistore_journal_heals_total", "volume", "v1"));
            assertEquals(1 << 20, value(before, "pistore_cache_capacity_bytes", "volume", "v1"));
            try (BlockTransport t = Transports.find("local", TransportOptions.NONE).create(TransportOptions.NONE);
                 HostConnection c = t.connect(listen, new ConnectOptions(1, 8))) {
                BlockDevice d = BlockDevice.open(c, "v1");
                for (int i = 0; i < 3; i++) {
                    d.writeSync(i * 2L, ByteBuffer.allocate(2 * f.dataSize())); // two blocks each
                }
                d.readSync(0, ByteBuffer.allocate(f.dataSize())); // written: in the cache
                d.readSync(100, ByteBuffer.allocate(f.dataSize())); // never read: a miss
                List<Sample> s = scrape(url);
                assertEquals(3, value(s, "pistore_journal_records_total", "volume", "v1"));
                assertTrue(value(s, "pistore_journal_bytes_total", "volume", "v1") >= 3 * 2 * (512 + 8),
                        "records hold data and metadata");
                assertEquals(1, value(s, "pistore_cache_hits_total", "volume", "v1"));
                assertEquals(1, value(s, "pistore_cache_misses_total", "volume", "v1"));
                assertTrue(value(s, "pistore_cache_blocks", "volume", "v1") >= 6, "the written blocks are cached");
            }
        }
    }
}
