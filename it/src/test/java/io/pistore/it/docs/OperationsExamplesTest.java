package io.pistore.it.docs;

import io.pistore.testkit.FreePorts;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/OPERATIONS.md runs as written: its command blocks, in order, as {@link DocBlocks} runs them.
 * The server its first block starts in the background serves the later blocks (metrics, stats)
 * until its "Running as a service" block stops it.
 */
@Timeout(600)
class OperationsExamplesTest {
    @TempDir
    Path work;

    @Test
    void operationsRunsAsWritten() throws Exception {
        String text = Files.readString(DocBlocks.doc("docs/OPERATIONS.md"));
        // run after the README's tour, its first command finds none of the tour's volumes: its directory is its own
        java.util.regex.Matcher tmp = java.util.regex.Pattern.compile("/tmp/[\\w.-]+").matcher(Files.readString(
                DocBlocks.doc("README.md")));
        while (tmp.find()) {
            assertFalse(text.contains(tmp.group() + "/") || text.contains(tmp.group() + " "),
                    "OPERATIONS.md uses the README's " + tmp.group());
        }
        List<DocBlocks.Block> blocks = DocBlocks.blocks(text);
        assertTrue(blocks.size() >= 5, "the blocks were found: " + blocks.size());
        DocBlocks.writeLauncher(work);
        Path ops = work.resolve("pistore-ops");
        int tcp = FreePorts.next();
        Map<Integer, Integer> ports = Map.of(4430, tcp, 10809, FreePorts.next(), 9464, FreePorts.next());
        List<String> ran;
        try {
            ran = DocBlocks.runAll("OPERATIONS.md", blocks, work, Map.of("/tmp/pistore-ops", ops), ports, tcp);
        } finally {
            DocBlocks.stopLeftover(ops.resolve("serve.pid"));
        }
        assertEquals(blocks.size(), ran.size());
        assertTrue(ran.contains("Running as a service") && ran.contains("Metrics"), ran.toString());
        assertFalse(Files.exists(ops.resolve("serve.pid")), "the last block stopped the server");
        assertTrue(Files.exists(work.resolve("bench.svg")), "bench --plot wrote its picture");
        System.out.println("[operations] ran " + ran.size() + " blocks: " + ran);
    }
}
