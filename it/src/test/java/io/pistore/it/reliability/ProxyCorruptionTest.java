package io.pistore.it.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.app.cli.Main;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Corruption in flight between two real processes: {@code pistore serve --transport tcp} on file
 * volumes, {@code pistore bench --target --rw verify} in another process, and a {@link BitFlipProxy}
 * in between. Without digests, bits flipped in the blocks (data, guard, app tag a command checks, ref
 * tag) must all come back as PI errors, and bits flipped in a write's LBA as ref-tag errors; with
 * header and data digests, any bit flipped anywhere after the handshake must end the connection
 * (a digest error). In every case {@code data_mismatches} is 0 and the volumes scrub clean.
 *
 * <p>{@code -Dpistore.proxy.seconds=N} runs each bench longer (CI: 3 s).
 */
class ProxyCorruptionTest {
    static final Pattern JSON = Pattern.compile("\\{\"transport\".*\\}");

    @TempDir
    Path dir;

    static long field(String json, String name) {
        Matcher m = Pattern.compile("\"" + name + "\":(\\d+)").matcher(json);
        assertTrue(m.find(), name + " in " + json);
        return Long.parseLong(m.group(1));
    }

    String bench(List<String> options, String target, String volume, String pi, int seconds) throws Exception {
        List<String> args = new ArrayList<>(List.of("bench", "--transport", "tcp", "--target", target, "--volume",
                volume, "--rw", "verify", "--pi", pi, "--seconds", String.valueOf(seconds), "--ramp", "0", "--qd", "16",
                "--json"));
        args.addAll(options);
        PistoreProcess b = PistoreProcess.start(List.of(), args.toArray(new String[0]));
        b.await(seconds + 120L);
        Matcher m = JSON.matcher(b.output());
        assertTrue(m.find(), b.output());
        return m.group();
    }

    @Test
    void flippedBitsBetweenProcessesAreDetectedNeverSilent() throws Exception {
        int seconds = Figures.intFlag("pistore.proxy.seconds", 3);
        String[] volumes = {"pass", "insert", "lba", "digest1", "digest2", "digest3"};
        for (String v : volumes) {
            StringWriter o = new StringWriter();
            assertEquals(0, Main.run(new PrintWriter(o), new PrintWriter(o), "volume", "create", "--data", dir.toString(),
                    v, "--size", "16MiB", "--format", "4096+8"), o.toString());
        }
        List<String> results = new ArrayList<>();
        try (PistoreProcess server = PistoreProcess.serve(List.of(), "--data", dir.toString(), "--transport", "tcp",
                "--listen", "127.0.0.1:0")) {
            String address = server.awaitListening();
            for (String pi : new String[] {"pass", "insert"}) {
                try (BitFlipProxy p = new BitFlipProxy(address, BitFlipProxy.Mode.PAYLOAD, 0.02, false, 4096, 8, 7 + pi.length())) {
                    String json = bench(List.of(), p.address(), pi, pi, seconds);
                    long detected = field(json, "pi_errors");
                    results.add("payload pi=" + pi + ": frames=" + p.frames.sum() + " injected=" + p.injected.sum()
                            + " (requests=" + p.injectedRequests.sum() + " responses=" + p.injectedResponses.sum()
                            + ") detected=" + detected + " silent=" + field(json, "data_mismatches") + " io_errors="
                            + field(json, "io_errors") + " not_flipped(escape=" + p.skippedEscape.sum()
                            + " unchecked_app=" + p.skippedUncheckedApp.sum() + ")");
                    assertTrue(p.injected.sum() > 10, json);
                    assertEquals(0, field(json, "data_mismatches"), json);
                    assertEquals(0, field(json, "io_errors"), json);
                    assertEquals(p.injected.sum(), detected, json);
                }
            }
            try (BitFlipProxy p = new BitFlipProxy(address, BitFlipProxy.Mode.LBA, 0.02, false, 4096, 8, 11)) {
                String json = bench(List.of(), p.address(), "lba", "insert", seconds);
                results.add("write LBA field, no digests: injected=" + p.injected.sum() + " detected(ref)="
                        + field(json, "ref") + " silent=" + field(json, "data_mismatches"));
                assertTrue(p.injected.sum() > 10, json);
                assertEquals(0, field(json, "data_mismatches"), json);
                assertEquals(p.injected.sum(), field(json, "ref"), json);
            }
            List<String> digests = List.of("--transport-option", "tcp.headerDigest=true",
                    "--transport-option", "tcp.dataDigest=true");
            long injected = 0;
            long dropped = 0;
            for (int i = 1; i <= 3; i++) {
                try (BitFlipProxy p = new BitFlipProxy(address, BitFlipProxy.Mode.ANY, 0.002, true, 4096, 8, 100 + i)) {
                    String json = bench(digests, p.address(), "digest" + i, "insert", 2);
                    injected += p.injected.sum();
                    dropped += field(json, "io_errors") > 0 ? 1 : 0;
                    assertEquals(0, field(json, "data_mismatches"), json);
                    assertTrue(p.injected.sum() >= 1 && field(json, "io_errors") > 0, "injected " + p.injected.sum() + ": " + json);
                }
            }
            results.add("any bit after the handshake, with digests: runs=3 injected=" + injected
                    + " connections_ended_by_digest_or_frame_check=" + dropped + " silent=0");
        }
        for (String v : volumes) {
            StringWriter o = new StringWriter();
            int rc = Main.run(new PrintWriter(o), new PrintWriter(o), "scrub", "--data", dir.toString(), v);
            assertEquals(0, rc, "scrub " + v + ": " + o);
        }
        results.add("scrub: all " + volumes.length + " volumes clean");
        for (String r : results) {
            Figures.record("proxy", r);
        }
    }
}
