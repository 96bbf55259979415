package io.pistore.it.cli;

import io.pistore.app.cli.Main;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.engine.Transports;
import io.pistore.spi.BlockTransportProvider;
import io.pistore.spi.TransportOption;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The transport settings as documented (docs/TRANSPORTS.md) and as listed by
 * {@code pistore transports} are the ones the providers declare: same names, values, defaults and
 * descriptions, in the same order (transports by name). Test-only providers, switched off, are left out.
 */
class TransportSettingsDocTest {
    private static final Pattern ROW = Pattern.compile("^\\| `([a-z][\\w.]*)` \\| (.*?) \\| (.*?) \\| (.*) \\|$");

    private static List<BlockTransportProvider> shipped() {
        return Transports.all().stream().filter(p -> p.availability().isAvailable()).toList();
    }

    private static List<String> declared() {
        List<String> l = new ArrayList<>();
        for (BlockTransportProvider p : shipped()) {
            for (TransportOption<?> o : p.options()) {
                l.add(o.name() + " | " + o.values() + " | " + o.defaultText() + " | " + o.description());
            }
        }
        return l;
    }

    @Test
    void theDocsTablesListExactlyTheDeclaredSettings() throws Exception {
        Path doc = Path.of("..", "docs", "TRANSPORTS.md");
        List<String> documented = new ArrayList<>();
        List<String> transports = new ArrayList<>();
        for (String line : Files.readAllLines(doc)) {
            Matcher m = ROW.matcher(line);
            if (m.matches()) {
                documented.add(m.group(1) + " | " + m.group(2) + " | " + m.group(3) + " | " + m.group(4).replace("`", ""));
            }
            if (line.startsWith("## `")) {
                transports.add(line.substring(4, line.indexOf('`', 4)));
            }
        }
        assertEquals(declared(), documented);
        assertEquals(shipped().stream().map(BlockTransportProvider::name).toList(), transports,
                "one section per transport, by name");
    }

    @Test
    void pistoreTransportsListsEverySettingWithItsDefault() {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Main.run(new PrintWriter(out), new PrintWriter(err), "transports", "--transport-option",
                "tcp.ioThreads=3");
        assertEquals(0, code, err.toString());
        String o = out.toString();
        for (BlockTransportProvider p : shipped()) {
            assertTrue(o.contains(p.name() + ": available"), o);
            for (TransportOption<?> opt : p.options()) {
                String shown = opt.name().equals("tcp.ioThreads") ? "tcp.ioThreads = 3 (given)"
                        : opt.name() + " = " + opt.defaultText();
                assertTrue(o.contains("  " + shown + "  [" + opt.values() + "]  " + opt.description()), shown + "\n" + o);
            }
        }
        assertTrue(o.contains("local: available\n  PI checked in hardware for guards: none"), o);
        assertTrue(o.contains("rdma: available\n  PI checked in hardware for guards: [CRC16, IP_CHECKSUM]"), o);
    }
}
