package io.pistore.it.docs;

import io.pistore.testkit.FreePorts;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README's tour runs as written: each command block of "A short tour", in order, as
 * {@link DocBlocks} runs them (with no waits between the lines); a block followed directly by an
 * output block must print exactly that.
 */
@Timeout(600)
class ReadmeExamplesTest {
    @TempDir
    Path work;

    /** The tour's command blocks. */
    static List<DocBlocks.Block> tour(String readme) {
        int start = readme.indexOf("\n## A short tour");
        int end = readme.indexOf("\n## ", start + 1);
        return DocBlocks.blocks(readme.substring(start, end < 0 ? readme.length() : end));
    }

    @Test
    void theTourRunsAsWritten() throws Exception {
        List<DocBlocks.Block> blocks = tour(Files.readString(DocBlocks.doc("README.md")));
        assertTrue(blocks.size() >= 10, "the tour's blocks were found: " + blocks.size());
        DocBlocks.writeLauncher(work);
        Path demo = work.resolve("pistore-demo");
        int tcp = FreePorts.next();
        Map<Integer, Integer> ports = Map.of(4430, tcp, 10809, FreePorts.next(), 4520, FreePorts.next(),
                3260, FreePorts.next());
        List<String> ran;
        try {
            ran = DocBlocks.runAll("README", blocks, work, Map.of("/tmp/pistore-demo", demo), ports, tcp);
        } finally {
            DocBlocks.stopLeftover(demo.resolve("serve.pid"));
        }
        assertTrue(ran.contains("The `pi` tool") && ran.contains("Volumes, a target, and a scrub"), ran.toString());
        System.out.println("[readme] ran " + ran.size() + " of " + blocks.size() + " blocks");
    }
}
