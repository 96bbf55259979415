package io.pistore.app.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.app.cli.EngineCommandsTest.Result;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import picocli.CommandLine.Model.CommandSpec;
import org.junit.jupiter.api.io.TempDir;

/** What a new user types first, and the one-line answers the CLI gives to their slips. */
class CliRoughEdgesTest {
    @TempDir
    Path dir;

    static Result run(String... args) {
        return EngineCommandsTest.run(args);
    }

    private static void assertUsageError(Result r, String expected) {
        assertEquals(ExitCodes.USAGE, r.code(), r.err());
        assertEquals(1, r.err().strip().lines().count(), r.err());
        assertTrue(r.err().contains(expected), r.err());
    }

    @Test
    void versionAndHelpAreCommandsToo() {
        Result flag = run("--version");
        Result word = run("version");
        assertEquals(0, word.code(), word.err());
        assertEquals(flag.out(), word.out());
        assertTrue(word.out().startsWith("pistore "), word.out());

        Result help = run("help");
        assertEquals(0, help.code(), help.err());
        assertTrue(help.out().contains("Usage: pistore"), help.out());
        Result helpVolume = run("help", "volume");
        assertEquals(0, helpVolume.code(), helpVolume.err());
        assertTrue(helpVolume.out().contains("Usage: pistore volume"), helpVolume.out());
    }

    @Test
    void helpBreaksLinesAtSpacesOnlySoNamesStayWhole() {
        String[][] commands = {{"--help"}, {"serve", "--help"}, {"bench", "--help"}, {"volume", "create", "--help"},
            {"scrub", "--help"}, {"replicas", "status", "--help"}, {"stats", "--help"}, {"help", "stop"}};
        for (String[] c : commands) {
            Result r = run(c);
            assertEquals(0, r.code(), r.err());
            for (String line : r.out().split("\n")) {
                assertTrue(line.length() <= HelpWrap.WIDTH || !line.strip().contains(" "),
                        String.join(" ", c) + ": a line longer than " + HelpWrap.WIDTH + " columns: " + line);
            }
        }
        String serve = run("serve", "--help").out();
        for (String name : new String[] {"tcp.tlsEngine", "http://HOST:PORT/metrics", "[--nbd[=HOST:PORT]]",
            "[--replica-listen=HOST:PORT]", "tcp.ioThreads=4", "rdma.pi=cpu"}) {
            assertTrue(serve.contains(name), "'" + name + "' whole in: " + serve);
        }
        assertTrue(serve.lines().anyMatch(l -> l.startsWith("Usage: pistore serve [")), serve);
        assertTrue(serve.lines().skip(1).takeWhile(l -> !l.startsWith("Serves"))
                .allMatch(l -> l.startsWith(" ".repeat("Usage: pistore serve ".length()) + "[")), serve);
    }

    @Test
    void aSizeWithAnUnknownSuffixNamesTheSuffixesThatWork() {
        for (String bad : new String[] {"12XB", "1.5g", "lots"}) {
            Result r = run("volume", "create", "--data", dir.resolve("data").toString(), "v", "--size", bad);
            assertUsageError(r, "expected a size such as 4096, 64MiB, 512m or 1GiB");
            assertTrue(r.err().contains("not '" + bad + "'"), r.err());
        }
    }

    @Test
    void benchRefusesABlockSizeTheFormatCannotServeBeforeCreatingOrPrefilling() throws Exception {
        Result memory = run("bench", "--bs", "1000", "--seconds", "1", "--ramp", "0");
        assertUsageError(memory, "--bs 1000 is not a multiple of --format's 4096-byte blocks");
        assertTrue(!memory.out().contains("prefill"), memory.out());

        Path data = Files.createDirectory(dir.resolve("data"));
        Result durable = run("bench", "--data", data.toString(), "--bs", "1000", "--format", "512+8",
                "--size", "4m", "--seconds", "1", "--ramp", "0");
        assertUsageError(durable, "--bs 1000 is not a multiple of --format's 512-byte blocks");
        assertTrue(!Files.exists(data.resolve("bench.data")), "the volume was created");

        // an existing volume is judged by its own blocks, not by --format
        assertEquals(0, run("volume", "create", "--data", data.toString(), "b4k", "--size", "4m").code());
        Result existing = run("bench", "--data", data.toString(), "--volume", "b4k", "--bs", "1024",
                "--format", "512+8", "--seconds", "1", "--ramp", "0");
        assertUsageError(existing, "--bs 1024 is not a multiple of the volume's 4096-byte blocks");
        assertTrue(!existing.out().contains("prefill"), existing.out());
    }

    /** Sparse files let a volume larger than the free space be created: it is, with a warning. */
    @Test
    void aVolumeLargerThanTheFreeSpaceIsCreatedWithAWarning() throws Exception {
        Path data = dir.resolve("big");
        long free = Files.getFileStore(dir).getUsableSpace();
        long size = (free / 4096 + (1 << 18)) * 4096; // 1 GiB more than is free, in whole blocks
        Result r = run("volume", "create", "--data", data.toString(), "huge", "--size", Long.toString(size), "--format",
                "4096+0");
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().startsWith("pistore volume create: warning: huge needs ") && r.err().contains(" free; ")
                && r.err().strip().lines().count() == 1, r.err());
        // what it says of the files is what they are: the data file sparse, the metadata (none here) written
        assertTrue(r.err().contains(", metadata 0 B, journal ") && r.err().contains("the data file is sparse"), r.err());
        assertTrue(Files.size(data.resolve("huge.data")) > free, "the data file has its full length");
        Result small = run("volume", "create", "--data", data.toString(), "small", "--size", "1m");
        assertEquals(0, small.code(), small.err());
        assertTrue(small.err().isEmpty(), "no warning when it fits: " + small.err());
        if (!io.pistore.engine.volume.file.FileVolume.inMemory(dir)) {
            // on a disk the metadata file is a hole too: one larger than the free room is made, with the warning
            long blocks = Files.getFileStore(dir).getUsableSpace() / 8 + (1 << 20);
            Result meta = run("volume", "create", "--data", data.toString(), "thin", "--size", Long.toString(blocks * 512),
                    "--format", "512+8");
            assertEquals(0, meta.code(), meta.err());
            assertTrue(meta.err().contains("the data and metadata files are sparse (they take room as blocks are written)"),
                    meta.err());
            assertEquals(0, run("volume", "delete", "--data", data.toString(), "thin").code());
        }
        // a replica's Raft log and snapshot count too: a fifth of the free room is too much for one
        long fifth = Files.getFileStore(dir).getUsableSpace() / 5 / 4096 * 4096;
        Result replica = run("volume", "create", "--data", dir.resolve("peer").toString(), "rv", "--size",
                Long.toString(fifth), "--format", "4096+8", "--replica-id", "n1", "--replicas",
                "n1=127.0.0.1:9971,n2=127.0.0.1:9972");
        assertEquals(0, replica.code(), replica.err());
        assertTrue(replica.err().startsWith("pistore volume create: warning: rv needs ")
                && replica.err().contains(", Raft log and a snapshot up to ") && replica.err().contains("falls behind"),
                replica.err());
    }

    @Test
    void benchWithATargetButNoTransportAsksForOne() {
        Result r = run("bench", "--target", "127.0.0.1:1", "--volume", "v1", "--rw", "randread", "--seconds", "1");
        assertUsageError(r, "--target 127.0.0.1:1 needs --transport tcp or rdma");
    }

    @Test
    void aListOfPeersIsRefusedForATransportThatTakesOneAddress() {
        // tcp and rdma take lists (they fail over among the peers); their parse errors are tested with them
        Result bench = run("bench", "--transport", "local", "--target", "a,b", "--volume", "v1", "--rw", "randread",
                "--seconds", "1");
        assertUsageError(bench, "--target a,b: transport local takes one address, not a list of peers");
        Result serve = run("serve", "--nbd", "127.0.0.1:0", "--transport", "local", "--target", "a,b");
        assertUsageError(serve, "--target a,b: transport local takes one address, not a list of peers");
    }

    @Test
    void benchAgainstATargetWritesOnlyWhenAskedTo() {
        Result r = run("bench", "--transport", "tcp", "--target", "127.0.0.1:1", "--volume", "v1", "--seconds", "1");
        assertUsageError(r, "--target 127.0.0.1:1 needs an explicit --rw");
        assertTrue(r.err().contains("overwrite"), r.err());
        CommandSpec bench = Main.commandLine(new PrintWriter(new StringWriter()), new PrintWriter(new StringWriter()))
                .getSubcommands().get("bench").getCommandSpec();
        String rwHelp = String.join(" ", bench.findOption("--rw").description());
        assertTrue(rwHelp.contains("with --target it must be given") && rwHelp.contains("overwrites the volume"), rwHelp);
        String dataHelp = String.join(" ", bench.findOption("--data").description());
        assertTrue(dataHelp.contains("bench creates the volume"), dataHelp);
    }

    @Test
    void verifyAndStripRefuseAFormatWithoutMetadata() throws Exception {
        Path img = Files.write(dir.resolve("raw.img"), new byte[4 * 512]);
        Result verify = run("pi", "verify", "--format", "512", img.toString());
        assertUsageError(verify, "format 512+0 has no metadata, so there is no PI to check");
        assertTrue(verify.out().isEmpty(), "no '0 bad' summary: " + verify.out());

        Path out = dir.resolve("out.img");
        Result strip = run("pi", "strip", "--format", "512+0", img.toString(), out.toString());
        assertUsageError(strip, "format 512+0 has no metadata, so there is no PI to remove");
        assertTrue(!Files.exists(out), "nothing written");
    }

    @Test
    void aDataDirThatDoesNotExistIsAUsageErrorExceptForVolumeCreate() {
        Path typo = dir.resolve("pistore-dta");
        String[][] refused = {
            {"volume", "list", "--data", typo.toString()},
            {"volume", "delete", "--data", typo.toString(), "v"},
            {"scrub", "--data", typo.toString(), "v"},
            {"serve", "--data", typo.toString(), "--transport", "local", "--listen", "typo-test"},
            {"bench", "--data", typo.toString(), "--size", "1m", "--seconds", "1", "--ramp", "0"},
        };
        for (String[] args : refused) {
            Result r = run(args);
            assertUsageError(r, "--data " + typo + ": no such directory");
            assertTrue(!Files.exists(typo), String.join(" ", args) + " created " + typo);
        }
        Result created = run("volume", "create", "--data", typo.toString(), "v", "--size", "1m");
        assertEquals(0, created.code(), created.err());
        assertTrue(Files.isDirectory(typo));
        Result list = run("volume", "list", "--data", typo.toString());
        assertEquals(0, list.code(), list.err());
        assertTrue(list.out().contains("v "), list.out());
    }

    @Test
    void aMissingConfigFileIsOneLineNamingIt() {
        Path nope = dir.resolve("nope.properties");
        Result r = run("bench", "--config", nope.toString());
        assertUsageError(r, "cannot read config " + nope + ": no such file");
        assertTrue(!r.err().contains("Exception"), r.err());
    }

    @Test
    void volumeAndScrubTakeAConfigAndWarnAboutKeysTheyDoNotHave() throws Exception {
        Path data = dir.resolve("data");
        Path cfg = Files.writeString(dir.resolve("pistore.properties"),
                "data=" + data + "\nqd=8\ntcp.ioThreads=2\n");
        Result create = run("volume", "create", "--config", cfg.toString(), "v", "--size", "1m");
        assertEquals(0, create.code(), create.err());
        assertTrue(create.out().contains("in " + data), "data from the file: " + create.out());
        assertEquals("pistore volume create: warning: config key 'qd' matches no option of this command; ignored",
                create.err().strip());

        Result list = run("volume", "list", "--config", cfg.toString());
        assertEquals(0, list.code(), list.err());
        assertTrue(list.out().contains("v "), list.out());
        assertEquals(1, list.err().strip().lines().count(), "only the qd warning, not tcp.ioThreads: " + list.err());

        Result scrub = run("scrub", "--config", cfg.toString(), "v");
        assertEquals(0, scrub.code(), scrub.err());
        assertTrue(scrub.err().contains("config key 'qd'") && !scrub.err().contains("ioThreads"), scrub.err());

        Result delete = run("volume", "delete", "--config", cfg.toString(), "v");
        assertEquals(0, delete.code(), delete.err());

        // (the app module has no tcp transport on its class path, so bench gets a file without tcp.*)
        Path benchCfg = Files.writeString(dir.resolve("bench.properties"), "data=" + data + "\nqd=8\n");
        Result bench = run("bench", "--config", benchCfg.toString(), "--seconds", "1", "--ramp", "0", "--size", "1m",
                "--qd", "2", "--rw", "randread");
        assertEquals(0, bench.code(), bench.err());
        assertTrue(!bench.err().contains("warning"), "bench has --qd and --data: " + bench.err());
    }
}
