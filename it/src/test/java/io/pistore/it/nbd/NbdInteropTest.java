package io.pistore.it.nbd;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.pistore.engine.Transports;
import io.pistore.engine.local.LocalTransportProvider;
import io.pistore.frontend.nbd.NbdServer;
import io.pistore.engine.service.TargetService;
import io.pistore.engine.volume.VolumeStore;
import io.pistore.integrity.BlockFormat;
import io.pistore.spi.BlockTransport;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.spi.TargetListener;
import io.pistore.spi.TransportCapabilities;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Real NBD clients (fio, qemu-img, qemu-io, nbdcopy, nbdinfo) against the NBD frontend over file
 * volumes with PI. A test whose tool is not installed is skipped and says which package has it
 * ({@code .ci/run} installs them).
 */
@Timeout(180)
class NbdInteropTest {
    private static final long VOLUME_BYTES = 32L << 20;
    private static final long IMAGE_BYTES = 8L << 20;

    @TempDir
    Path dir;

    VolumeStore store;
    BlockTransport transport;
    TargetListener listener;
    HostConnection host;
    NbdServer server;
    /** The server's log lines; appended on its threads, read by tests meanwhile (iteration on a snapshot). */
    final List<String> log = new java.util.concurrent.CopyOnWriteArrayList<>();

    @BeforeEach
    void start() throws IOException {
        store = VolumeStore.open(dir.resolve("data"));
        store.create("vol", BlockFormat.of(4096, 8), VOLUME_BYTES / 4096);
        store.create("img", BlockFormat.of(4096, 8), IMAGE_BYTES / 4096);
        store.create("small", BlockFormat.of(512, 8), 2048);
        transport = new LocalTransportProvider().create();
        listener = transport.listen("", new TargetService(store));
        host = transport.connect(listener.address(), new ConnectOptions(2, 256));
        server = NbdServer.start("127.0.0.1:0", host, new NbdServer.Options().log(log::add));
    }

    @AfterEach
    void stop() throws IOException {
        server.close();
        host.close();
        listener.close();
        transport.close();
        store.close();
    }

    String uri(String export) {
        return "nbd://127.0.0.1:" + server.address().getPort() + "/" + export;
    }

    // ------------------------------------------------------------------ tools

    static boolean onPath(String tool) {
        return ToolRun.onPath(tool);
    }

    static void assumeTool(String tool, String pkg) {
        ToolRun.assumeTool(tool, pkg);
    }

    /** Runs a command (stdout and stderr together) in the test's directory, failing the test if it outlives {@code seconds}. */
    ToolRun run(long seconds, String... cmd) throws IOException, InterruptedException {
        return ToolRun.run(dir, seconds, cmd);
    }

    ToolRun ok(long seconds, String... cmd) throws IOException, InterruptedException {
        ToolRun r = run(seconds, cmd);
        assertEquals(0, r.code(), String.join(" ", cmd) + " ->\n" + r.output());
        return r;
    }

    Path randomImage(String name, long bytes, long seed) throws IOException {
        Path p = dir.resolve(name);
        byte[] b = new byte[(int) bytes];
        new Random(seed).nextBytes(b);
        // A zero stretch, so sparse-aware copies have something to skip.
        java.util.Arrays.fill(b, 1 << 20, 2 << 20, (byte) 0);
        Files.write(p, b);
        return p;
    }

    /**
     * Flips a bit of block {@code lba}'s stored guard in the volume's metadata file, after a
     * checkpoint has moved every block from the journal there.
     */
    void corruptStoredPi(String volume, long lba) throws IOException {
        store.checkpoint(volume);
        try (FileChannel m = FileChannel.open(dir.resolve("data").resolve(volume + ".meta"), StandardOpenOption.READ,
                StandardOpenOption.WRITE)) {
            ByteBuffer b = ByteBuffer.allocate(1);
            m.read(b, lba * 8);
            b.put(0, (byte) (b.get(0) ^ 0x01)).rewind();
            m.write(b, lba * 8);
        }
    }

    // ------------------------------------------------------------------ tests

    @Test
    void fioRandomWriteWithCrc32cVerifyThenReadVerifyHasNoErrors() throws Exception {
        assumeTool("fio", "fio");
        ToolRun engines = run(30, "fio", "--enghelp=nbd");
        assumeTrue(engines.code() == 0, "skipped: this fio has no nbd ioengine (built without libnbd)");
        String[] common = {"fio", "--name=pistore-nbd", "--ioengine=nbd", "--uri=" + uri("vol"), "--bs=4k",
            "--iodepth=16", "--size=16M", "--verify=crc32c", "--verify_fatal=1", "--randseed=7",
            "--rw=randwrite", "--group_reporting"};
        List<String> write = new ArrayList<>(List.of(common));
        write.add("--do_verify=1");
        ToolRun w = ok(120, write.toArray(new String[0]));
        assertTrue(w.output().contains("err= 0"), w.output());
        // A second client reads every block back and checks it against the same job's headers.
        List<String> verify = new ArrayList<>(List.of(common));
        verify.add("--verify_only=1");
        ToolRun v = ok(120, verify.toArray(new String[0]));
        assertTrue(v.output().contains("err= 0"), v.output());
        assertTrue(v.output().contains("read:"), "verify_only read the blocks: " + v.output());
    }

    @Test
    void qemuImgConvertRawIntoAVolumeAndBackIsByteIdentical() throws Exception {
        assumeTool("qemu-img", "qemu-utils");
        Path image = randomImage("in.raw", IMAGE_BYTES, 1);
        ok(120, "qemu-img", "convert", "-n", "-f", "raw", "-O", "raw", image.toString(), uri("img"));
        Path back = dir.resolve("back.raw");
        ok(120, "qemu-img", "convert", "-f", "raw", "-O", "raw", uri("img"), back.toString());
        assertArrayEquals(Files.readAllBytes(image), Files.readAllBytes(back));
        ToolRun info = ok(60, "qemu-img", "info", "-f", "raw", uri("img"));
        assertTrue(info.output().contains(IMAGE_BYTES + " bytes"), info.output());
    }

    @Test
    void nbdcopyBothWaysIsByteIdentical() throws Exception {
        assumeTool("nbdcopy", "libnbd-bin");
        Path image = randomImage("copy-in.raw", IMAGE_BYTES, 2);
        ok(120, "nbdcopy", image.toString(), uri("img"));
        Path back = dir.resolve("copy-back.raw");
        Files.createFile(back);
        ok(120, "nbdcopy", uri("img"), back.toString());
        assertArrayEquals(Files.readAllBytes(image), Files.readAllBytes(back));
        // Volume to volume over two NBD connections, with several requests in flight.
        ok(120, "nbdcopy", "--requests=16", uri("img"), uri("vol"));
        Path head = dir.resolve("vol-head.raw");
        Files.createFile(head);
        ok(120, "nbdcopy", uri("vol"), head.toString());
        byte[] whole = Files.readAllBytes(head);
        assertEquals(VOLUME_BYTES, whole.length);
        assertArrayEquals(Files.readAllBytes(image), java.util.Arrays.copyOf(whole, (int) IMAGE_BYTES));
        assertArrayEquals(new byte[(int) (VOLUME_BYTES - IMAGE_BYTES)],
                java.util.Arrays.copyOfRange(whole, (int) IMAGE_BYTES, whole.length), "never written: zeros");
    }

    @Test
    void nbdinfoShowsEachExportItsSizeAndBlockSizes() throws Exception {
        assumeTool("nbdinfo", "libnbd-bin");
        ToolRun list = ok(60, "nbdinfo", "--list", "nbd://127.0.0.1:" + server.address().getPort());
        for (String name : List.of("vol", "img", "small")) {
            assertTrue(list.output().contains("export=\"" + name + "\""), list.output());
        }
        ToolRun json = ok(60, "nbdinfo", "--json", uri("small"));
        String j = json.output();
        assertEquals(1024 * 1024L, number(j, "export-size"), j);
        assertEquals(1, number(j, "block_size_minimum"), j);
        assertEquals(512, number(j, "block_size_preferred"), j);
        long max = number(j, "block_size_maximum");
        assertTrue(max >= 1 << 20, j);
        assertTrue(j.contains("\"can_multi_conn\": true") && j.contains("\"can_fua\": true")
                && j.contains("\"can_trim\": true") && j.contains("\"can_zero\": true")
                && j.contains("\"can_flush\": true"), j);
        ToolRun vol = ok(60, "nbdinfo", uri("vol"));
        assertTrue(vol.output().contains("export-size: " + VOLUME_BYTES), vol.output());
        assertTrue(vol.output().contains("block_size_preferred: 4096"), vol.output());
        assertTrue(vol.output().contains("4096+8 type=1"), "description names the format: " + vol.output());
    }

    static long number(String json, String key) {
        Matcher m = Pattern.compile("\"" + Pattern.quote(key) + "\"\\s*:\\s*(\\d+)").matcher(json);
        assertTrue(m.find(), key + " in " + json);
        return Long.parseLong(m.group(1));
    }

    /**
     * base:allocation: written ranges are data, never written and trimmed ones holes, as nbdinfo
     * --map and qemu-img map see them; nbdcopy then copies only the data into a fresh image.
     */
    @Test
    void nbdinfoMapAndQemuImgMapShowWrittenRangesAsDataTheRestAsHoles() throws Exception {
        assumeTool("nbdinfo", "libnbd-bin");
        assumeTool("qemu-io", "qemu-utils");
        ok(60, "qemu-io", "-f", "raw", "-c", "write -P 0x5a 1M 64k", "-c", "write -P 0x5a 8M 4k",
                "-c", "discard 1M 4k", uri("vol"));
        ToolRun map = ok(60, "nbdinfo", "--map", uri("vol"));
        List<String> rows = new ArrayList<>();
        for (String line : map.output().strip().split("\n")) {
            rows.add(String.join(" ", line.strip().split("\\s+")));
        }
        assertEquals(List.of(
                "0 1052672 3 hole,zero",
                "1052672 61440 0 data",
                "1114112 7274496 3 hole,zero",
                "8388608 4096 0 data",
                "8392704 25161728 3 hole,zero"), rows, map.output());
        assumeTool("qemu-img", "qemu-utils");
        ToolRun qmap = ok(60, "qemu-img", "map", "--output=json", "-f", "raw", uri("vol"));
        Matcher m = Pattern.compile("\"start\": (\\d+), \"length\": (\\d+),[^}]*\"data\": (true|false)")
                .matcher(qmap.output());
        List<String> data = new ArrayList<>();
        while (m.find()) {
            if (m.group(3).equals("true")) {
                data.add(m.group(1) + "+" + m.group(2));
            }
        }
        assertEquals(List.of("1052672+61440", "8388608+4096"), data, qmap.output());
    }

    @Test
    void corruptStoredPiIsAnIoErrorAtThatOffsetNotWrongData() throws Exception {
        assumeTool("qemu-io", "qemu-utils");
        ok(60, "qemu-io", "-f", "raw", "-c", "write -P 0xab 0 64k", "-c", "flush", uri("vol"));
        corruptStoredPi("vol", 5);
        // The block with the bad PI fails, its neighbours read with the right bytes.
        ToolRun bad = run(60, "qemu-io", "-f", "raw", "-c", "read -P 0xab 20k 4k", uri("vol"));
        assertTrue(bad.output().contains("Input/output error"), bad.output());
        assertTrue(!bad.output().contains("Pattern verification failed"), "no wrong data: " + bad.output());
        ok(60, "qemu-io", "-f", "raw", "-c", "read -P 0xab 16k 4k", "-c", "read -P 0xab 24k 40k", uri("vol"));
        ToolRun span = run(60, "qemu-io", "-f", "raw", "-c", "read -P 0xab 0 64k", uri("vol"));
        assertTrue(span.output().contains("Input/output error"), span.output());
        assertTrue(io.pistore.testkit.Eventually.within(java.time.Duration.ofSeconds(10),
                () -> log.stream().anyMatch(l -> l.contains("at " + 5 * 4096 + ": PI check failed: lba=5"))),
                "the server reports the first bad offset (ERROR_OFFSET): " + log);
        if (onPath("nbdcopy")) {
            Path out = dir.resolve("bad.raw");
            Files.createFile(out);
            ToolRun copy = run(60, "nbdcopy", uri("vol"), out.toString());
            assertNotEquals(0, copy.code(), copy.output());
            assertTrue(copy.output().contains("Input/output error"), copy.output());
        }
    }

    /**
     * A gateway over tcp maps a volume by reading its metadata alone: a volume written whole is all
     * data to nbdinfo --map, and the target saw metadata-only reads and no whole read while it mapped.
     */
    @Test
    void aGatewayOverTcpMapsAWrittenVolumeFromItsMetadataAlone() throws Exception {
        assumeTool("nbdinfo", "libnbd-bin");
        assumeTool("qemu-io", "qemu-utils");
        assumeTrue(Transports.all().stream().anyMatch(p -> p.name().equals("tcp") && p.availability().isAvailable()),
                "skipped: the tcp transport is not on the class path");
        TargetService service = new TargetService(store);
        java.util.concurrent.atomic.AtomicInteger metadataOnly = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicInteger whole = new java.util.concurrent.atomic.AtomicInteger();
        io.pistore.spi.TargetHandler counting = new io.pistore.spi.TargetHandler() {
            @Override
            public List<io.pistore.spi.VolumeInfo> volumes() {
                return service.volumes();
            }

            @Override
            public void execute(io.pistore.spi.BlockRequest r, io.pistore.spi.PiDuty duty,
                    java.util.function.Consumer<io.pistore.spi.Completion> done) {
                if (r.isMetadataOnly()) {
                    metadataOnly.incrementAndGet();
                } else if (r.op() == io.pistore.spi.Operation.READ) {
                    whole.incrementAndGet();
                }
                service.execute(r, duty, done);
            }

            @Override
            public boolean readsMetadataOnly() {
                return service.readsMetadataOnly();
            }
        };
        io.pistore.spi.BlockTransportProvider tcp = Transports.find("tcp");
        try (BlockTransport t = tcp.create();
             TargetListener l = t.listen("127.0.0.1:0", counting);
             HostConnection hc = t.connect(l.address(), new ConnectOptions(1, 16));
             NbdServer gateway = NbdServer.start("127.0.0.1:0", hc, new NbdServer.Options()
                     .maxTransferBytes(Math.min(tcp.capabilities().maxTransferBytes(), TransportCapabilities.MAX_TRANSFER_BYTES))
                     .log(log::add))) {
            String img = "nbd://127.0.0.1:" + gateway.address().getPort() + "/img";
            ok(120, "qemu-io", "-f", "raw", "-c", "write -P 0x3c 0 " + IMAGE_BYTES, img);
            whole.set(0);
            ToolRun map = ok(60, "nbdinfo", "--map", img);
            assertEquals("0 " + IMAGE_BYTES + " 0 data", String.join(" ", map.output().strip().split("\\s+")), map.output());
            assertTrue(metadataOnly.get() > 0, "metadata-only reads over tcp");
            assertEquals(0, whole.get(), "no block read whole to map a volume written whole");
        }
    }

    @Test
    void aGatewayOverTcpExportsVolumesCreatedGrownAndDeletedOnTheTargetAfterItStarted() throws Exception {
        assumeTool("nbdinfo", "libnbd-bin");
        assumeTool("nbdcopy", "libnbd-bin");
        assumeTrue(Transports.all().stream().anyMatch(p -> p.name().equals("tcp") && p.availability().isAvailable()),
                "skipped: the tcp transport is not on the class path");
        io.pistore.spi.BlockTransportProvider tcp = Transports.find("tcp");
        try (BlockTransport t = tcp.create();
             TargetListener l = t.listen("127.0.0.1:0", new TargetService(store));
             HostConnection hc = t.connect(l.address(), new ConnectOptions(1, 16));
             NbdServer gateway = NbdServer.start("127.0.0.1:0", hc, new NbdServer.Options()
                     .maxTransferBytes(Math.min(tcp.capabilities().maxTransferBytes(), TransportCapabilities.MAX_TRANSFER_BYTES))
                     .log(log::add))) {
            String base = "nbd://127.0.0.1:" + gateway.address().getPort();
            store.create("later", BlockFormat.of(4096, 8), 256);
            assertTrue(ok(60, "nbdinfo", "--list", base).output().contains("export=\"later\""), "listed once created");
            Path src = dir.resolve("later.src");
            byte[] bytes = new byte[1 << 20];
            new java.util.Random(11).nextBytes(bytes);
            Files.write(src, bytes);
            ok(60, "nbdcopy", src.toString(), base + "/later");
            Path back = dir.resolve("later.back");
            ok(60, "nbdcopy", base + "/later", back.toString());
            assertArrayEquals(bytes, Files.readAllBytes(back));

            store.resize("later", 512);
            assertTrue(ok(60, "nbdinfo", base + "/later").output().contains("export-size: " + (512 * 4096)),
                    "a new client sees the grown size");
            store.delete("later");
            ToolRun gone = run(60, "nbdinfo", base + "/later");
            assertNotEquals(0, gone.code(), "a deleted volume is no export: " + gone.output());
            assertFalse(ok(60, "nbdinfo", "--list", base).output().contains("later"));
        }
    }

    @Test
    void overTheTcpTransportPiIsCheckedAcrossTheNetworkToo() throws Exception {
        assumeTool("qemu-img", "qemu-utils");
        assumeTool("qemu-io", "qemu-utils");
        assumeTrue(Transports.all().stream().anyMatch(p -> p.name().equals("tcp") && p.availability().isAvailable()),
                "skipped: the tcp transport is not on the class path");
        io.pistore.spi.BlockTransportProvider tcp = Transports.find("tcp");
        try (BlockTransport t = tcp.create();
             TargetListener l = t.listen("127.0.0.1:0", new TargetService(store));
             HostConnection hc = t.connect(l.address(), new ConnectOptions(1, 64));
             NbdServer remote = NbdServer.start("127.0.0.1:0", hc, new NbdServer.Options()
                     .maxTransferBytes(Math.min(tcp.capabilities().maxTransferBytes(), TransportCapabilities.MAX_TRANSFER_BYTES))
                     .log(log::add))) {
            String img = "nbd://127.0.0.1:" + remote.address().getPort() + "/img";
            Path image = randomImage("tcp-in.raw", IMAGE_BYTES, 3);
            ok(120, "qemu-img", "convert", "-n", "-f", "raw", "-O", "raw", image.toString(), img);
            Path back = dir.resolve("tcp-back.raw");
            ok(120, "qemu-img", "convert", "-f", "raw", "-O", "raw", img, back.toString());
            assertArrayEquals(Files.readAllBytes(image), Files.readAllBytes(back));
            corruptStoredPi("img", 7);
            ToolRun bad = run(60, "qemu-io", "-f", "raw", "-c", "read 28k 4k", img);
            assertTrue(bad.output().contains("Input/output error"), bad.output());
            ok(60, "qemu-io", "-f", "raw", "-c", "read 24k 4k", "-c", "read 32k 4k", img);
        }
    }
}
