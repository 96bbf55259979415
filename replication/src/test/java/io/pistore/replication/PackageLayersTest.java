package io.pistore.replication;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The module's packages stay layered as replication/README.md shows them: each depends only on the
 * ones below it (the shared words at the root, the Raft state machine, then the volume's paths and
 * the group's membership, the peer on top), so none can reach back into one above it and no cycle
 * forms. Read from the main sources' imports and fully qualified names.
 */
class PackageLayersTest {
    private static final String ROOT = "io.pistore.replication";
    /** Each package with the packages it may use. */
    private static final Map<String, Set<String>> ALLOWED = Map.of(
            ROOT, Set.of(ROOT + ".rpc"),
            ROOT + ".rpc", Set.of(),
            ROOT + ".raft", Set.of(ROOT),
            ROOT + ".volume", Set.of(ROOT, ROOT + ".raft", ROOT + ".rpc"),
            ROOT + ".group", Set.of(ROOT, ROOT + ".raft"),
            ROOT + ".node", Set.of(ROOT, ROOT + ".raft", ROOT + ".volume", ROOT + ".group"));
    private static final Pattern PACKAGE = Pattern.compile("^package ([\\w.]+);", Pattern.MULTILINE);
    private static final Pattern USE = Pattern.compile("\\b(io\\.pistore\\.replication(?:\\.[a-z]\\w*)*)\\.[A-Z]");

    static Map<String, Set<String>> uses(Path sources) throws IOException {
        Map<String, Set<String>> uses = new TreeMap<>();
        List<Path> files;
        try (Stream<Path> s = Files.walk(sources)) {
            files = s.filter(p -> p.toString().endsWith(".java")).toList();
        }
        for (Path f : files) {
            String src = Files.readString(f);
            Matcher pm = PACKAGE.matcher(src);
            assertTrue(pm.find(), f + " names its package");
            String pkg = pm.group(1);
            Set<String> used = uses.computeIfAbsent(pkg, k -> new TreeSet<>());
            Matcher m = USE.matcher(src);
            while (m.find()) {
                if (!m.group(1).equals(pkg)) {
                    used.add(m.group(1));
                }
            }
        }
        return uses;
    }

    @Test
    void eachPackageUsesOnlyThePackagesBelowIt() throws IOException {
        Map<String, Set<String>> uses = uses(Path.of("src/main/java/io/pistore/replication"));
        assertEquals(ALLOWED.keySet(), uses.keySet(), "the module's packages");
        List<String> wrong = new ArrayList<>();
        uses.forEach((pkg, used) -> used.stream().filter(u -> !ALLOWED.get(pkg).contains(u))
                .forEach(u -> wrong.add(pkg + " -> " + u)));
        assertEquals(List.of(), wrong, "uses that reach up a layer (a cycle in the making)");
    }

    @Test
    void aUseThatReachesUpALayerIsFound(@org.junit.jupiter.api.io.TempDir Path dir) throws IOException {
        Path raft = Files.createDirectories(dir.resolve("raft"));
        Files.writeString(raft.resolve("A.java"), "package " + ROOT + ".raft;\n\nimport " + ROOT
                + ".volume.B;\n\nclass A {\n    " + ROOT + ".node.C c;\n}\n");
        assertEquals(Map.of(ROOT + ".raft", Set.of(ROOT + ".volume", ROOT + ".node")), uses(dir));
    }
}
