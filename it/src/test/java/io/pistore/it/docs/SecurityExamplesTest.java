package io.pistore.it.docs;

import io.pistore.testkit.FreePorts;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/SECURITY.md runs as written: its {@code sh} blocks in order, as {@link DocBlocks} runs them
 * (the certificates made with openssl, NBD over TLS with certificates and with pre-shared keys through
 * nbdinfo, nbdcopy and qemu-img, the tcp transport over TLS with the files the page shows, access
 * rules, metrics behind TLS and basic authentication, the modes of a data directory). Each block that
 * starts a server stops it; a block whose client is not installed is skipped with a line saying so
 * ({@code .ci/run} installs them).
 */
@Timeout(600)
class SecurityExamplesTest {
    private static final List<String> CLIENTS = List.of("nbdinfo", "nbdcopy", "qemu-img", "psktool", "htpasswd", "curl");

    @TempDir
    Path work;

    @Test
    void securityRunsAsWritten() throws Exception {
        assumeTrue(DocBlocks.onPath("openssl"), "openssl is not installed: the page's certificates cannot be made");
        DocBlocks.Options options = new DocBlocks.Options(true, false, CLIENTS);
        List<DocBlocks.Block> blocks = DocBlocks.blocks(Files.readString(DocBlocks.doc("docs/SECURITY.md")), options);
        assertTrue(blocks.stream().filter(b -> b.file() != null).count() >= 4, "the files were found: " + blocks);
        assertTrue(blocks.stream().filter(b -> b.file() == null).count() >= 6, "the blocks were found: " + blocks);
        DocBlocks.writeLauncher(work);
        int tcp = FreePorts.next();
        Map<Integer, Integer> ports = Map.of(4430, tcp, 10809, FreePorts.next(), 9100, FreePorts.next());
        List<String> ran;
        try {
            ran = DocBlocks.runAll("SECURITY.md", blocks, work, Map.of(), ports, tcp, options);
        } finally {
            DocBlocks.stopLeftover(work.resolve("serve.pid"));
        }
        assertEquals(blocks.size(), ran.size());
        assertTrue(ran.contains("Pre-shared keys") && ran.contains("The tcp transport over TLS")
                && ran.contains("Which client may use which volume"), ran.toString());
        assertTrue(Files.exists(work.resolve("pki/client-cert.pem")), "the certificates were made");
        assertFalse(Files.exists(work.resolve("serve.pid")), "every block stopped its server");
        System.out.println("[security] ran " + ran.size() + " blocks: " + ran);
    }
}
