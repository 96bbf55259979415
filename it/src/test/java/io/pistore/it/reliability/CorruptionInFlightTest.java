package io.pistore.it.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.app.bench.BenchOptions;
import io.pistore.app.bench.BenchResult;
import io.pistore.app.bench.BenchRunner;
import io.pistore.engine.scrub.Scrubber;
import io.pistore.engine.volume.VolumeStore;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.InjectTarget;
import io.pistore.it.reliability.FaultInjectingProvider.Site;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Corruption in flight, in one process: {@code bench --rw verify} over the {@code faulty} wrapper
 * around local, tcp and rdma, on a file volume; one bit flipped in data, guard, app or ref tag of
 * about one request in 50. Every injection must come back as a PI error (injected == detected),
 * nothing may be read back wrong without an error ({@code data_mismatches == 0}), and the volume
 * must scrub clean afterwards (a write that failed its check stored nothing).
 *
 * <p>{@code -Dpistore.fault.seconds=N} runs each case longer (CI: 2 s).
 */
class CorruptionInFlightTest {
    @TempDir
    Path dir;

    @AfterEach
    void off() {
        FaultInjectingProvider.disable();
    }

    @ParameterizedTest(name = "{0} pi={1} sites={2}")
    @CsvSource({
        "local, pass,   HOST_REQUEST HOST_RESPONSE",
        "local, pass,   TARGET_REQUEST TARGET_RESPONSE",
        "tcp,   pass,   HOST_REQUEST HOST_RESPONSE",
        "tcp,   insert, TARGET_REQUEST TARGET_RESPONSE",
        "rdma,  pass,   HOST_REQUEST HOST_RESPONSE",
        "rdma,  insert, TARGET_REQUEST TARGET_RESPONSE",
    })
    void everyInjectedCorruptionIsDetectedAndNothingIsStored(String inner, String pi, String sites) throws Exception {
        Set<Site> s = EnumSet.noneOf(Site.class);
        for (String x : sites.trim().split("\\s+")) {
            s.add(Site.valueOf(x));
        }
        Set<InjectTarget> fields = pi.equals("pass") ? EnumSet.allOf(InjectTarget.class)
                : EnumSet.of(InjectTarget.DATA, InjectTarget.GUARD, InjectTarget.REF_TAG); // insert: app mask 0
        FaultInjectingProvider.Counters n = FaultInjectingProvider.enable(
                new FaultInjectingProvider.Config(inner.trim(), 0.02, s, fields, 0xF417 + inner.hashCode()));
        BenchOptions o = new BenchOptions();
        o.rw = BenchOptions.Rw.VERIFY;
        o.pi = BenchOptions.PiMode.parse(pi);
        o.seconds = Figures.intFlag("pistore.fault.seconds", 2);
        o.rampSeconds = 0;
        o.queueDepth = 16;
        o.sizeBytes = 4L << 20; // 1024 blocks: slots revisit their blocks, so corrupted reads are of written blocks
        o.format = BlockFormat.of(4096, 8);
        o.dataDir = Files.createDirectories(dir.resolve("data"));
        o.progress = false;
        BenchResult r = new BenchRunner(o, null).run(FaultInjectingProvider.NAME);
        FaultInjectingProvider.disable();

        long injected = n.total();
        long detected = r.guardErrors + r.appErrors + r.refErrors;
        Scrubber.Report scrub;
        List<String> bad = new ArrayList<>();
        try (VolumeStore store = VolumeStore.open(o.dataDir)) {
            scrub = Scrubber.scrub(store.get(o.volume), e -> bad.add(e.toString()), x -> { });
        }
        Figures.record("in-flight " + inner.trim() + " pi=" + pi.trim() + " " + sites.trim(),
                "ops=" + r.ops + " injected=" + injected + " detected=" + detected + " (guard=" + r.guardErrors
                        + " app=" + r.appErrors + " ref=" + r.refErrors + ") silent=" + r.dataMismatches
                        + " io_errors=" + r.ioErrors + " scrub_bad=" + scrub.badBlocks + " [" + n + "]");
        assertTrue(injected > 10, "too few injections to mean anything: " + n);
        assertEquals(0, r.dataMismatches, "silent corruption");
        assertEquals(0, r.ioErrors, "other errors");
        assertEquals(injected, detected, "every injected corruption detected, nothing else reported: " + n);
        assertTrue(scrub.clean(), "scrub after the run: " + bad);
    }
}
