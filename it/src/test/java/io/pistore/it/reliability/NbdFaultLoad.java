package io.pistore.it.reliability;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;

/**
 * Real NBD clients through a gateway, as a user runs them: fio (its nbd engine) writing with crc32c
 * verify headers, each block read back and checked soon after it was written ({@code verify_backlog}),
 * an fsync (NBD flush) every 8 writes, beside a job trimming another region; and nbdcopy writing an
 * image with holes (sent as write-zeroes) and reading the volume back. The volume's layout: nbdcopy
 * owns its first {@value #COPY_MIB} MiB, fio's writes the next {@value #FIO_MIB} MiB after
 * {@value #FIO_AT_MIB} MiB, its trims the {@value #TRIM_MIB} MiB after those.
 */
final class NbdFaultLoad {
    static final int COPY_MIB = 1;
    static final int FIO_AT_MIB = 4;
    static final int FIO_MIB = 8;
    static final int TRIM_MIB = 4;
    /** The size of the volume this load fills; no bigger, as each nbdcopy read-back reads all of it. */
    static final String VOLUME_SIZE = (FIO_AT_MIB + FIO_MIB + TRIM_MIB) + "MiB";
    private static final Pattern ERROR = Pattern.compile("\"error\" : (\\d+)");

    private NbdFaultLoad() {
    }

    /** Skips the test when fio with its nbd engine or nbdcopy is missing. */
    static void assumeTools() throws Exception {
        Assumptions.assumeTrue(onPath("fio"), "skipped: fio is not installed (apt-get install fio)");
        Assumptions.assumeTrue(onPath("nbdcopy"), "skipped: nbdcopy is not installed (apt-get install libnbd-bin)");
        Process p = new ProcessBuilder("fio", "--enghelp=nbd").redirectErrorStream(true).start();
        p.getInputStream().readAllBytes();
        Assumptions.assumeTrue(p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0,
                "skipped: this fio has no nbd ioengine (built without libnbd)");
    }

    static boolean onPath(String tool) {
        for (String d : System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator)) {
            if (!d.isEmpty() && Files.isExecutable(Path.of(d, tool))) {
                return true;
            }
        }
        return false;
    }

    /**
     * A fio run in the background until {@link #stop}, its JSON report in a file of {@code dir}: it
     * runs as long as the round needs it, however long a fault lasts on a loaded machine.
     */
    static final class Fio implements AutoCloseable {
        /** fio's own time limit: a hang guard, as the test stops it once the round is over. */
        private static final int LIMIT_SECONDS = 240;
        /** fio's exit status after SIGINT: it stops its jobs, completes what is in flight and reports. */
        private static final int INTERRUPTED = 128;

        private final Process process;
        private final Path report;
        private final Path console;
        private boolean stopped;

        /** Starts fio on {@code uri}: sequential writes with verify and fsync, and random trims. */
        Fio(String uri, Path dir, String tag) throws IOException {
            report = dir.resolve("fio-" + tag + ".json");
            console = dir.resolve("fio-" + tag + ".out");
            List<String> cmd = new ArrayList<>(List.of("fio", "--output-format=json", "--output=" + report,
                    "--ioengine=nbd", "--uri=" + uri, "--bs=4k", "--time_based", "--runtime=" + LIMIT_SECONDS,
                    "--name=mix", "--rw=write", "--offset=" + FIO_AT_MIB + "M", "--size=" + FIO_MIB + "M",
                    "--iodepth=4", "--verify=crc32c", "--verify_backlog=16", "--verify_fatal=1", "--fsync=8",
                    "--name=trim", "--rw=randtrim", "--offset=" + (FIO_AT_MIB + FIO_MIB) + "M",
                    "--size=" + TRIM_MIB + "M", "--iodepth=2"));
            process = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(console.toFile())
                    .directory(dir.toFile()).start();
        }

        /**
         * Stops fio (SIGINT: it completes the requests in flight, verifies what it can and reports),
         * then {@link #finish}. Asserts that fio was still running: it ran through the whole round.
         */
        Result stop() throws Exception {
            if (!process.isAlive()) {
                throw new AssertionError("fio ended before the round did (exit " + process.exitValue() + "):\n"
                        + Files.readString(console, StandardCharsets.UTF_8));
            }
            stopped = true;
            FaultCluster.signal(process.pid(), "INT");
            return finish();
        }

        /**
         * Waits for fio to end; asserts it exited 0 (or as stopped by {@link #stop}) and reported no
         * error; returns its figures: requests by kind and the longest completion latency (ms) of any
         * of them.
         */
        Result finish() throws Exception {
            if (!process.waitFor(300, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new AssertionError("fio did not end within 300 s");
            }
            String out = Files.readString(console, StandardCharsets.UTF_8);
            String json = Files.exists(report) ? Files.readString(report, StandardCharsets.UTF_8) : "";
            int exit = process.exitValue();
            if (exit != 0 && !(stopped && exit == INTERRUPTED) || out.contains("io_u error") || out.contains("verify")
                    && out.contains("bad")) {
                throw new AssertionError("fio exited " + exit + ":\n" + out + "\n" + json);
            }
            Matcher e = ERROR.matcher(json);
            while (e.find()) {
                if (!e.group(1).equals("0")) {
                    throw new AssertionError("fio reported error " + e.group(1) + ":\n" + json);
                }
            }
            Result r = new Result();
            for (String dir : List.of("read", "write", "trim")) {
                long[] s = section(json, "\"" + dir + "\" : {", "\"clat_ns\" : {");
                r.add(dir, s);
            }
            r.add("sync", section(json, "\"sync\" : {", "\"lat_ns\" : {"));
            if (r.requests[1] == 0 || r.requests[0] == 0) {
                throw new AssertionError("fio wrote or verified nothing:\n" + json);
            }
            return r;
        }

        /** Ends a fio the round left early (it failed before {@link #stop}). */
        @Override
        public void close() {
            process.destroyForcibly();
        }

        /** {total requests, longest latency ns} summed and maxed over the jobs' sections named {@code key}. */
        private static long[] section(String json, String key, String latency) {
            long total = 0;
            long max = 0;
            for (int at = json.indexOf(key); at >= 0; at = json.indexOf(key, at + 1)) {
                total += number(json, at, "\"total_ios\" :");
                int lat = json.indexOf(latency, at);
                if (lat >= 0) {
                    max = Math.max(max, number(json, lat, "\"max\" :"));
                }
            }
            return new long[] {total, max};
        }

        private static long number(String json, int from, String field) {
            int at = json.indexOf(field, from);
            if (at < 0) {
                return 0;
            }
            Matcher m = Pattern.compile("\\s*(\\d+)").matcher(json);
            return m.find(at + field.length()) ? Long.parseLong(m.group(1)) : 0;
        }
    }

    /** fio's figures: requests (reads = verify reads, writes, trims, fsyncs) and the longest latency. */
    static final class Result {
        final long[] requests = new long[4];
        long longestNanos;
        String longestKind = "none";
        private int next;

        private void add(String kind, long[] s) {
            requests[next++] = s[0];
            if (s[1] > longestNanos) {
                longestNanos = s[1];
                longestKind = kind;
            }
        }

        long longestMillis() {
            return TimeUnit.NANOSECONDS.toMillis(longestNanos);
        }

        @Override
        public String toString() {
            return "fio: " + requests[1] + " writes, " + requests[0] + " verify reads, " + requests[2] + " trims, "
                    + requests[3] + " fsyncs, longest " + longestMillis() + " ms (" + longestKind + ")";
        }
    }

    /**
     * nbdcopy of an image of {@value #COPY_MIB} MiB to {@code uri}: random data with holes when
     * {@code holes} (nbdcopy sends a hole as write-zeroes), else random throughout; then the volume
     * read back with nbdcopy, its first {@value #COPY_MIB} MiB compared. Null when all is well, else
     * what went wrong.
     */
    static String copyAndReadBack(String uri, Path dir, long seed, boolean holes) throws Exception {
        int size = COPY_MIB << 20;
        byte[] data = image(seed, holes);
        Path in = dir.resolve("copy-" + seed + ".img");
        if (holes) { // data, a hole, data, a hole: the file is sparse where the image holds zeros
            try (java.nio.channels.FileChannel f = java.nio.channels.FileChannel.open(in,
                    java.nio.file.StandardOpenOption.CREATE_NEW, java.nio.file.StandardOpenOption.WRITE)) {
                f.write(java.nio.ByteBuffer.wrap(data, 0, size / 4), 0);
                f.write(java.nio.ByteBuffer.wrap(data, size / 2, size / 4), size / 2);
                f.truncate(size);
                if (f.size() < size) {
                    f.write(java.nio.ByteBuffer.allocate(1), size - 1);
                }
            }
        } else {
            Files.write(in, data);
        }
        String w = nbdcopy(in.toString(), uri);
        if (w != null) {
            return "nbdcopy write: " + w;
        }
        Files.delete(in);
        return readBack(uri, dir, seed, data);
    }

    /**
     * The volume read with nbdcopy, its first {@value #COPY_MIB} MiB compared with what {@link
     * #copyAndReadBack} wrote without holes for {@code seed}; null when equal, else what went wrong.
     */
    static String readBack(String uri, Path dir, long seed) throws Exception {
        return readBack(uri, dir, seed, image(seed, false));
    }

    private static String readBack(String uri, Path dir, long seed, byte[] data) throws Exception {
        Path out = dir.resolve("back-" + seed + ".img");
        String r = nbdcopy(uri, out.toString());
        if (r != null) {
            return "nbdcopy read: " + r;
        }
        byte[] back = Arrays.copyOf(Files.readAllBytes(out), data.length);
        Files.delete(out);
        return Arrays.equals(data, back) ? null : "what nbdcopy read back differs from what it wrote";
    }

    /** The image of {@code seed}: random, with zeros in its second and fourth quarters when {@code holes}. */
    private static byte[] image(long seed, boolean holes) {
        int size = COPY_MIB << 20;
        byte[] data = new byte[size];
        new Random(seed).nextBytes(data);
        if (holes) {
            Arrays.fill(data, size / 4, size / 2, (byte) 0);
            Arrays.fill(data, 3 * size / 4, size, (byte) 0);
        }
        return data;
    }

    private static String nbdcopy(String from, String to) throws Exception {
        Process p = new ProcessBuilder("nbdcopy", from, to).redirectErrorStream(true).start();
        byte[] o = p.getInputStream().readAllBytes();
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            return "did not end within 120 s";
        }
        return p.exitValue() == 0 ? null : "exit " + p.exitValue() + ": " + new String(o, StandardCharsets.UTF_8);
    }
}
