package io.pistore.it.reliability;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;

/**
 * Where the reliability tests write the figures of their last run, one line each, so
 * docs/RELIABILITY.md can quote them: {@code it/target/reliability-figures.txt} (and stdout).
 */
final class Figures {
    private Figures() {
    }

    static synchronized void record(String test, String line) {
        String s = test + ": " + line;
        System.out.println("[reliability] " + s);
        try {
            Path p = Paths.get(System.getProperty("pistore.figures", "target/reliability-figures.txt"));
            Files.writeString(p, s + System.lineSeparator(), StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                    StandardOpenOption.APPEND);
        } catch (IOException e) {
            System.out.println("[reliability] cannot write figures: " + e);
        }
    }

    /** An integer system property (flags for longer runs). */
    static int intFlag(String name, int ciDefault) {
        return Integer.getInteger(name, ciDefault);
    }
}
