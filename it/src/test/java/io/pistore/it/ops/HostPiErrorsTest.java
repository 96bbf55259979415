package io.pistore.it.ops;

import static io.pistore.it.ops.MetricsEndpointTest.scrape;
import static io.pistore.it.ops.MetricsEndpointTest.value;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.server.metrics.EngineCollector;
import io.pistore.server.metrics.MetricsEndpoint;
import io.pistore.app.metrics.MetricsText.Sample;
import io.pistore.engine.BlockDevice;
import io.pistore.engine.Transports;
import io.pistore.engine.service.TargetService;
import io.pistore.engine.stats.PiErrorPlace;
import io.pistore.engine.stats.TargetStats;
import io.pistore.engine.stats.VolumeCounters;
import io.pistore.engine.volume.Volume;
import io.pistore.engine.volume.VolumeStore;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.Pi;
import io.pistore.integrity.PiContext;
import io.pistore.integrity.PiErrorKind;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.BlockTransport;
import io.pistore.spi.Completion;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.spi.Status;
import io.pistore.spi.TargetListener;
import io.pistore.spi.TransportOptions;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A PI error the host catches (where="host"): a block whose stored ref tag is wrong, read over tcp.
 * The tcp target returns stored PI unchecked, so only the host's check of the arriving bytes finds
 * it; the host process counts it (as serve --nbd --target and bench do) and its endpoint shows it.
 */
class HostPiErrorsTest {
    private static final BlockFormat F = BlockFormat.of(512, 8);

    @Test
    void aReadErrorTheTcpHostCatchesIsCountedOnTheHostUnderHost() throws Exception {
        try (VolumeStore store = VolumeStore.inMemory()) {
            Volume v = store.create("v1", F, 64);
            byte[] data = new byte[512];
            byte[] meta = new byte[8];
            Pi.generate(PiContext.builder(F).initialRefTag(F.refTagOf(7)).build(), ScatterList.wrap(data),
                    ScatterList.wrap(meta), 1);
            meta[6] ^= 0x01; // the stored ref tag no longer names LBA 7
            v.write(7, 1, ScatterList.wrap(data), ScatterList.wrap(meta), false);

            TargetStats target = new TargetStats();
            TargetStats host = new TargetStats();
            EngineCollector hostFigures = new EngineCollector(host);
            try (BlockTransport t = Transports.find("tcp", TransportOptions.NONE).create(TransportOptions.NONE);
                 TargetListener l = t.listen("127.0.0.1:0", target.measure("tcp", new TargetService(store)));
                 HostConnection c = host.measureHost("tcp", t.connect(l.address(), new ConnectOptions(1, 8)));
                 MetricsEndpoint m = MetricsEndpoint.start("127.0.0.1:0", hostFigures)) {
                // from the connection on, the host's endpoint has the volume's series, at zero
                List<Sample> before = scrape(m.url());
                assertTrue(before.stream().anyMatch(x -> x.name().equals("pistore_pi_errors_total")
                        && "host".equals(x.labels().get("where")) && "v1".equals(x.labels().get("volume"))),
                        "a healthy host shows its where=\"host\" series: " + before);
                assertEquals(0, value(before, "pistore_pi_errors_total", "where", "host"));
                BlockDevice d = BlockDevice.open(c, "v1");
                Completion good = d.read(6, ScatterList.wrap(new byte[512])).get(10, TimeUnit.SECONDS);
                assertEquals(Status.SUCCESS, good.status(), good.toString());
                Completion r = d.read(7, ScatterList.wrap(new byte[512])).get(10, TimeUnit.SECONDS);
                assertEquals(Status.REF_TAG_CHECK, r.status(), r.toString());
                assertTrue(r.caughtByHost(), "the target answered success; the host's check caught it");

                VolumeCounters hv = host.transport("tcp").volume("v1");
                assertEquals(1, hv.piErrors(PiErrorKind.REF_TAG, PiErrorPlace.HOST));
                assertEquals(0, hv.piErrors(PiErrorKind.GUARD, PiErrorPlace.HOST));
                VolumeCounters tv = target.transport("tcp").volume("v1");
                for (PiErrorPlace p : PiErrorPlace.values()) {
                    assertEquals(0, tv.piErrors(PiErrorKind.REF_TAG, p), "the target saw no error at " + p);
                }

                List<Sample> s = scrape(m.url());
                assertEquals(1, value(s, "pistore_pi_errors_total", "transport", "tcp", "volume", "v1", "kind", "ref",
                        "where", "host"));
                assertEquals(1, value(s, "pistore_pi_errors_total", "volume", "v1"), "one error, counted once");
            }
        }
    }
}
