package io.pistore.it.docs;

import io.pistore.testkit.FreePorts;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/REPLICATION.md runs as written: its command blocks in order, as {@link DocBlocks} runs them,
 * in one shell's variables ({@code P}, {@code T}): three peers made and started, benches through
 * them, an NBD gateway, a scrub, a fourth peer added, one removed, one replaced, the volume deleted
 * on every member, one peer's replica deleted offline, the servers stopped. Outputs are compared
 * without their figures (log indexes, which peer leads differ between runs).
 */
@Timeout(600)
class ReplicationExamplesTest {
    @TempDir
    Path work;

    @Test
    void replicationRunsAsWritten() throws Exception {
        DocBlocks.Options options = new DocBlocks.Options(false, true, List.of());
        List<DocBlocks.Block> blocks = DocBlocks.blocks(Files.readString(DocBlocks.doc("docs/REPLICATION.md")), options);
        assertTrue(blocks.size() >= 10, "the blocks were found: " + blocks.size());
        DocBlocks.writeLauncher(work);
        Path rep = work.resolve("rep");
        Map<Integer, Integer> ports = new HashMap<>();
        for (int p : new int[] {4431, 4432, 4433, 4434, 4435, 9871, 9872, 9873, 9874, 9875, 9876, 9877, 10809}) {
            ports.put(p, FreePorts.next());
        }
        List<String> ran;
        try {
            ran = DocBlocks.runAll("REPLICATION.md", blocks, work, Map.of("/tmp/rep", rep), ports,
                    ports.get(4431), options);
        } finally {
            for (String pid : new String[] {"d1/serve.pid", "d2/serve.pid", "d3/serve.pid", "d4/serve.pid",
                "d5/serve.pid", "nbd.pid"}) {
                DocBlocks.stopLeftover(rep.resolve(pid));
            }
        }
        assertEquals(blocks.size(), ran.size());
        assertTrue(ran.contains("Changing membership") && ran.contains("Deleting one peer's replica offline"),
                ran.toString());
        assertFalse(Files.exists(rep.resolve("d1/serve.pid")), "the last block stopped the servers");
        System.out.println("[replication] ran " + ran.size() + " blocks: " + ran);
    }
}
