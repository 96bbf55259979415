package io.pistore.app.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** serve, bench, volume and scrub, driven through {@link Main} as a user would. */
class EngineCommandsTest {
    @TempDir
    Path dir;

    record Result(int code, String out, String err) {
    }

    static Result run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Main.run(new PrintWriter(out), new PrintWriter(err), args);
        return new Result(code, out.toString(), err.toString());
    }

    private String data() {
        return dir.resolve("data").toString();
    }

    @Test
    void volumeCreateListDelete() {
        Result c = run("volume", "create", "--data", data(), "v1", "--size", "4MiB", "--format", "4096+16");
        assertEquals(0, c.code(), c.err());
        assertTrue(c.out().contains("created v1: 1024 blocks, 4096+16 type=1 guard=crc64 pi=first"), c.out());
        assertEquals(0, run("volume", "create", "--data", data(), "v2", "--size", "1m", "--format", "512+8",
                "--type", "3", "--guard", "ip").code());
        Result l = run("volume", "list", "--data", data());
        assertEquals(0, l.code(), l.err());
        assertTrue(l.out().contains("v1") && l.out().contains("1024") && l.out().contains("4.0 MiB"), l.out());
        assertTrue(l.out().contains("v2") && l.out().contains("512+8 type=3 guard=ip"), l.out());
        Result dup = run("volume", "create", "--data", data(), "v1", "--size", "4MiB");
        assertEquals(2, dup.code());
        assertTrue(dup.err().contains("already exists"), dup.err());
        assertEquals(1, dup.err().strip().lines().count(), dup.err());
        assertEquals(0, run("volume", "delete", "--data", data(), "v1").code());
        assertTrue(!run("volume", "list", "--data", data()).out().contains("v1 "));
        assertEquals(2, run("volume", "delete", "--data", data(), "v1").code());
    }

    @Test
    void volumeCreateRefusesImpossibleArgumentsInOneLine() {
        String[][] bad = {
            {"volume", "create", "--data", data(), "x", "--size", "1000"},
            {"volume", "create", "--data", data(), "x", "--format", "512+16"},
            {"volume", "create", "--data", data(), "x", "--format", "4000+8"},
            {"volume", "create", "--data", data(), "x", "--type", "7"},
            {"volume", "create", "--data", data(), "bad/name"},
            {"volume", "create", "--data", data(), "x", "--guard", "md5"},
        };
        for (String[] args : bad) {
            Result r = run(args);
            assertEquals(2, r.code(), String.join(" ", args) + " -> " + r.err());
            assertEquals(1, r.err().strip().lines().count(), r.err());
        }
    }

    @Test
    void scrubOfAVolumeWhoseJournalIsDamagedSaysSoNotThatItIsMissing() throws Exception {
        assertEquals(0, run("volume", "create", "--data", data(), "dj", "--size", "1m").code());
        try (FileChannel c = FileChannel.open(dir.resolve("data/dj.journal"), StandardOpenOption.WRITE)) {
            byte[] junk = new byte[1024];
            java.util.Arrays.fill(junk, (byte) 'X');
            c.write(java.nio.ByteBuffer.wrap(junk), 0); // both header slots
        }
        Result r = run("scrub", "--data", data(), "dj");
        assertEquals(2, r.code(), r.out() + r.err());
        java.util.List<String> lines = r.err().strip().lines().toList();
        assertEquals(2, lines.size(), r.err());
        assertTrue(lines.get(0).startsWith("pistore: volume dj not opened: ") && lines.get(0).contains("damaged"),
                r.err());
        assertTrue(lines.get(1).contains("volume 'dj' is in " + data() + " but could not be opened"), r.err());
        assertTrue(run("scrub", "--data", data(), "nosuch").err().contains("no volume named 'nosuch'"));
    }

    @Test
    void scrubIsCleanThenFindsTheCorruptBlock() throws Exception {
        assertEquals(0, run("volume", "create", "--data", data(), "s", "--size", "1m", "--format", "4096+8").code());
        Result clean = run("scrub", "--data", data(), "s");
        assertEquals(0, clean.code(), clean.err());
        assertTrue(clean.out().contains("checked 256 blocks") && clean.out().contains("0 bad")
                && clean.out().contains("256 unwritten"), clean.out());
        try (FileChannel c = FileChannel.open(dir.resolve("data/s.data"), StandardOpenOption.WRITE)) {
            c.write(ByteBuffer.wrap(new byte[] {1}), 9L * 4096 + 17);
        }
        Result bad = run("scrub", "--data", data(), "s");
        assertEquals(1, bad.code(), bad.out() + bad.err());
        assertTrue(bad.out().contains("lba=9 error=guard"), bad.out());
        assertEquals(2, run("scrub", "--data", data(), "nope").code());
    }

    @Test
    void benchPrintsJsonWithTheFieldsItPromises() {
        Result r = run("bench", "--seconds", "1", "--ramp", "0", "--size", "16m", "--qd", "4", "--json");
        assertEquals(0, r.code(), r.err());
        String json = r.out().strip();
        assertTrue(json.startsWith("{") && json.endsWith("}"), json);
        for (String key : new String[] {"\"transport\":\"local\"", "\"iops\":", "\"mib_per_s\":", "\"lat_us\":{\"p50\":",
                "\"p99\":", "\"p999\":", "\"pi_errors\":0", "\"io_errors\":0", "\"data_mismatches\":0"}) {
            assertTrue(json.contains(key), key + " in " + json);
        }
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("\"p999\":([0-9.]+),\"max\":([0-9.]+)").matcher(json);
        assertTrue(m.find(), "the longest request after p99.9 in " + json);
        assertTrue(Double.parseDouble(m.group(2)) > 0 && Double.parseDouble(m.group(2)) >= Double.parseDouble(m.group(1)),
                "max at least p99.9: " + json);
        assertTrue(r.err().contains("iops="), "progress goes to stderr with --json: " + r.err());
        assertTrue(r.err().startsWith(io.pistore.integrity.GuardPath.describe() + "\n"),
                "the guard path and why, first: " + r.err());
        assertTrue(r.err().startsWith("guards: "), r.err());
    }

    @Test
    void benchRunsPiModesSideBySideAndComparesThem() {
        Result r = run("bench", "--pi", "insert,off", "--rounds", "2", "--seconds", "1", "--ramp", "0", "--size", "16m",
                "--qd", "4", "--json");
        assertEquals(0, r.code(), r.err());
        java.util.List<String> lines = r.out().strip().lines().collect(java.util.stream.Collectors.toList());
        assertEquals(5, lines.size(), r.out());
        for (int i = 0; i < 4; i++) {
            assertTrue(lines.get(i).contains("\"round\":" + (i / 2 + 1) + ","), lines.get(i));
        }
        assertTrue(lines.get(4).startsWith("{\"transport\":\"local\",\"side_by_side\":{\"rounds\":2,\"baseline\":\"off\""),
                lines.get(4));
        assertTrue(lines.get(4).contains("\"pi\":\"insert\",") && lines.get(4).contains("\"ratio_median\":"), lines.get(4));
        Result text = run("bench", "--pi", "off,insert", "--seconds", "1", "--ramp", "0", "--size", "16m", "--qd", "4");
        assertEquals(0, text.code(), text.err());
        assertTrue(text.out().contains("side by side on local, 1 round") && text.out().contains("insert/off="), text.out());
    }

    @Test
    void benchAllComparesTransportsAndVerifyCountsNothingBad() {
        Result r = run("bench", "--transport", "all", "--rw", "verify", "--seconds", "1", "--ramp", "0", "--size", "16m",
                "--qd", "2", "--queues", "2");
        assertEquals(0, r.code(), r.err());
        assertTrue(r.out().contains("transport=local rw=verify"), r.out());
        assertTrue(r.out().contains("data_mismatches=0"), r.out());
    }

    @Test
    void benchRefusesUnknownTransportsAndBadOptions() {
        Result t = run("bench", "--transport", "carrier-pigeon", "--seconds", "1");
        assertEquals(2, t.code());
        assertTrue(t.err().contains("unknown transport 'carrier-pigeon'") && t.err().contains("available: local"), t.err());
        assertEquals(1, t.err().strip().lines().count(), t.err());
        assertEquals(2, run("bench", "--rw", "sideways").code());
        assertEquals(2, run("bench", "--pi", "maybe").code());
        assertEquals(2, run("bench", "--pi", "insert,insert").code());
        assertEquals(2, run("bench", "--pi", "insert,off", "--rounds", "0").code());
        assertEquals(2, run("bench", "--bs", "1000", "--seconds", "1").code());
        assertEquals(2, run("bench", "--qd", "0").code());
    }

    @Test
    void configFileSuppliesDefaultsAndFlagsWin() throws Exception {
        Path cfg = dir.resolve("pistore.properties");
        Files.writeString(cfg, "transport=carrier-pigeon\nseconds=1\nramp=0\nsize=16m\nqd=2\n");
        Result fromFile = run("bench", "--config", cfg.toString());
        assertEquals(2, fromFile.code(), "the file's transport is used");
        assertTrue(fromFile.err().contains("carrier-pigeon"), fromFile.err());
        Result flagWins = run("bench", "--config", cfg.toString(), "--transport", "local");
        assertEquals(0, flagWins.code(), flagWins.err());
        assertTrue(flagWins.out().contains("qd=2"), "qd from the file: " + flagWins.out());
        Result missing = run("bench", "--config", dir.resolve("nope.properties").toString());
        assertEquals(2, missing.code());
        assertTrue(missing.err().contains("cannot read config"), missing.err());
    }

    @Test
    void serveServesItsVolumesAndStopsCleanly() throws Exception {
        assertEquals(0, run("volume", "create", "--data", data(), "srv", "--size", "1m").code());
        try (ServeThread serve = new ServeThread("serve", "--data", data(), "--transport", "local", "--listen",
                "serve-test")) {
            serve.awaitOutput(o -> o.contains("srv"));
            assertTrue(serve.out().contains("1 volume(s)") && serve.out().contains("on local serve-test"),
                    serve.out() + " / " + serve.err());
            assertEquals(0, serve.stop());
            assertTrue(serve.out().contains("stopped"), serve.out());
        }
        Result badTransport = run("serve", "--data", data(), "--transport", "nope");
        assertEquals(2, badTransport.code());
        assertTrue(badTransport.err().contains("unknown transport 'nope'"), badTransport.err());
    }

    @Test
    void commandsOnADataDirThatServeOwnsAreRefusedInOneLine() throws Exception {
        assertEquals(0, run("volume", "create", "--data", data(), "own", "--size", "1m").code());
        String owner = data() + " is in use by pid " + ProcessHandle.current().pid() + " (pistore serve)";
        try (ServeThread serve = new ServeThread("serve", "--data", data(), "--transport", "local", "--listen",
                "owner-test")) {
            serve.awaitOutput(o -> o.contains("own "));
            assertTrue(serve.out().contains("1 volume(s)"), serve.out() + " / " + serve.err());
            // (volume commands go through the server's control socket: LiveVolumeCommandsTest; so does scrub)
            Result scrub = run("scrub", "--data", data(), "own");
            assertEquals(0, scrub.code(), scrub.out() + scrub.err());
            assertTrue(scrub.out().startsWith("checked 256 blocks (") && scrub.out().strip().endsWith(": 0 bad, 256 unwritten"),
                    "scrubbed by the serving server: " + scrub.out());
            String[][] refused = {
                {"bench", "--transport", "local", "--data", data(), "--volume", "own", "--size", "1m", "--seconds", "1",
                    "--ramp", "0"},
                {"serve", "--data", data(), "--transport", "local", "--listen", "owner-test-2"},
            };
            for (String[] args : refused) {
                Result r = run(args);
                String line = "pistore " + (args[0].equals("volume") ? "volume " + args[1] : args[0]) + ": " + owner;
                assertEquals(2, r.code(), String.join(" ", args) + " -> " + r.out() + r.err());
                assertEquals(1, r.err().strip().lines().count(), r.err());
                assertTrue(r.err().startsWith(line), r.err());
            }
            String serveHint = run("serve", "--data", data(), "--transport", "local").err();
            assertTrue(serveHint.contains("; stop it, or export its volumes with --nbd --target"), serveHint);
            String benchHint = run("bench", "--transport", "local", "--data", data(), "--volume", "own").err();
            assertTrue(benchHint.strip().endsWith("; stop it, or bench its volumes with --target HOST:PORT"), benchHint);
            assertEquals(0, serve.stop());
        }
        Result list = run("volume", "list", "--data", data());
        assertEquals(0, list.code(), list.err());
        assertTrue(list.out().contains("own "), "nothing was deleted: " + list.out());
        assertEquals(0, run("volume", "delete", "--data", data(), "own").code(), "free again once serve stopped");
    }

    @Test
    void serveNbdExportsMemoryVolumesOnAFreePort() throws Exception {
        try (ServeThread serve = new ServeThread("serve", "--nbd", "127.0.0.1:0", "--memory-volume", "m1:1MiB",
                "--memory-volume", "m2:64k:512+8")) {
            java.util.regex.Pattern p = java.util.regex.Pattern.compile("NBD on 127\\.0\\.0\\.1:(\\d+)");
            serve.awaitOutput(o -> p.matcher(o).find() && o.contains("/m2"));
            String out = serve.out();
            java.util.regex.Matcher m = p.matcher(out);
            assertTrue(m.find(0), out + " / " + serve.err());
            assertTrue(out.contains("nbd://127.0.0.1:" + m.group(1) + "/m1  1048576 bytes"), out);
            assertTrue(out.contains("/m2  65536 bytes  512+8"), out);
            assertTrue(!out.contains(" on tcp "), "no transport listener without --listen: " + out);
            try (java.net.Socket s = new java.net.Socket("127.0.0.1", Integer.parseInt(m.group(1)))) {
                s.setSoTimeout(10_000);
                java.io.DataInputStream in = new java.io.DataInputStream(s.getInputStream());
                assertEquals(0x4e42444d41474943L, in.readLong(), "NBDMAGIC");
                assertEquals(0x49484156454F5054L, in.readLong(), "IHAVEOPT");
            }
            assertEquals(0, serve.stop());
            assertTrue(serve.out().contains("stopped"), serve.out());
        }
    }

    @Test
    void serveNbdRefusesInconsistentOptionsInOneLine() {
        String[][] bad = {
            {"serve", "--target", "127.0.0.1:4430"},
            {"serve", "--nbd", "127.0.0.1:99999", "--memory-volume", "m:1m"},
            {"serve", "--nbd", "127.0.0.1:0", "--memory-volume", "m:1000"},
            {"serve", "--nbd", "127.0.0.1:0", "--memory-volume", "m"},
            {"serve", "--nbd", "127.0.0.1:0", "--transport", "local", "--target", "x", "--memory-volume", "m:1m"},
            {"serve", "--nbd", "127.0.0.1:0", "--transport", "nope", "--target", "127.0.0.1:1"},
        };
        for (String[] args : bad) {
            Result r = run(args);
            assertEquals(2, r.code(), String.join(" ", args) + " -> " + r.out() + r.err());
            assertEquals(1, r.err().strip().lines().count(), r.err());
        }
    }
}
